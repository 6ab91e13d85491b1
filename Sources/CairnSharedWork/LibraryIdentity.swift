import CairnCore
import CairnLibrary
import Foundation
import Glibc

/// A library's name in a shared work queue: a UUID kept in the library folder, so every host finds the same
/// library wherever it mounts it, and a worker whose mount is missing (an empty folder in its place) finds none
/// and refuses to work instead of writing into the wrong disk.
public enum LibraryIdentity {
    /// The identity of the library at `layout`, made and made durable when it has none yet (an import, holding
    /// the library's lock).
    public static func ensure(_ layout: LibraryLayout) throws -> String {
        if let identity = read(layout) { return identity }
        // Made aside and linked into place, which never replaces: of two imports starting at once (the library's
        // lock comes later), the first to link names the library and the other reads that name.
        let temporary = layout.identityPath + ".\(getpid()).new"
        defer { unlink(temporary) }
        do {
            try Data((UUID().uuidString.lowercased() + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
            try FileSystem.syncFile(temporary)
            switch SystemCall.result({ link(temporary, layout.identityPath) }) {
            case .success, .failure(.fileExists): break
            case .failure(let code): throw SystemCallError("link", path: layout.identityPath, code: code)
            }
            try FileSystem.syncDirectory(layout.root)
        } catch {
            throw SharedWorkError("cannot record the library's identity in \(layout.identityPath): \(error)")
        }
        guard let identity = read(layout) else {
            throw SharedWorkError("\(layout.identityPath) holds no identity cairn wrote; move it aside")
        }
        return identity
    }

    /// The identity of the library at `layout`, nil when it has none (no import has used a queue there, or the
    /// folder is not the library: an unmounted disk).
    public static func read(_ layout: LibraryLayout) -> String? {
        guard let data = FileManager.default.contents(atPath: layout.identityPath) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return UUID(uuidString: text) == nil ? nil : text
    }
}

/// Why shared work could not start, in one line.
public struct SharedWorkError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
