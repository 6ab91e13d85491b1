import CairnCatalog
import CairnCore
import CairnTesting
import Foundation

@testable import CairnLibrary

/// A source folder imported by the real `cairn import` into a library, for the deletion-side commands.
struct ImportedLibrary {
    let folder: TemporaryDirectory
    var source: String { folder.subpath("src") }
    var root: String { folder.subpath("lib") }
    /// Source-relative path → bytes.
    let files: [String: Data]

    init(files names: [String] = ["a.jpg", "b.jpg"]) throws {
        folder = try TemporaryDirectory()
        var files: [String: Data] = [:]
        for (index, name) in names.enumerated() {
            let bytes = try DistinctJPEG.data(byteCount: 4_000 + index, seed: UInt8(index))
            try folder.write(bytes, to: "src/" + name)
            files[name] = bytes
        }
        self.files = files
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib")])
        guard result.status == 0 else { throw FixtureError(description: "import exited \(result.status): \(result.standardError)") }
    }

    func cairn(_ arguments: [String], environment: [String: String] = [:]) throws -> CairnBinary.Result {
        try CairnBinary.run(arguments + ["--library", root], environment: environment)
    }

    /// The library folder and its SQLite catalog, opened as a run opens them (without the lock).
    func open() throws -> (library: Library, catalog: SQLiteCatalog) {
        let library = try Library(root: root)
        return (library, try library.openCatalog())
    }

    /// The asset imported from `path`.
    func asset(_ path: String, in catalog: SQLiteCatalog) async throws -> AssetRecord {
        guard let asset = try await catalog.allAssets().first(where: { $0.firstSourcePath == path }) else {
            throw FixtureError(description: "no asset imported from \(path)")
        }
        return asset
    }

    func bytes(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: root + "/" + relative)) }
    func exists(_ relative: String) -> Bool { FileManager.default.fileExists(atPath: root + "/" + relative) }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
}
