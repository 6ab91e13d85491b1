import CairnCore
import Foundation
import GRDB

/// A Google Takeout `.json` that said its photo sat in Google Photos' trash, as a run read it: what the hold needs
/// (the title it is matched to its photo by, the capture time a date filter reads), kept by the JSON's source path,
/// size and modification time, as a linked sidecar is. That photo is held back on every run, so its JSON is never
/// linked, and without this it would be read again every run (for a `.tgz`, by decompressing the archive up to it).
public struct TrashedTakeoutJSON: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "takeout_trashed"
    /// Below its source's root, as the walk lists it.
    public var sourcePath: String
    public var size: Int64
    public var modificationTimeNanoseconds: Int64
    public var title: String?
    public var taken: Date?

    public init(sourcePath: String, size: Int64, modificationTimeNanoseconds: Int64, title: String?, taken: Date?) {
        self.sourcePath = sourcePath
        self.size = size
        self.modificationTimeNanoseconds = modificationTimeNanoseconds
        self.title = title
        self.taken = taken
    }

    /// Whether this is what `file` holds now: the same size and modification time.
    public func describes(_ file: SourceFile) -> Bool {
        sourcePath == file.relativePath && size == file.fingerprint.size
            && modificationTimeNanoseconds == file.fingerprint.modificationTimeNanoseconds
    }

    enum CodingKeys: String, CodingKey {
        case sourcePath = "source_path", size = "source_size", modificationTimeNanoseconds = "source_mtime_ns", title, taken
    }
}

extension SQLiteCatalog {
    /// What runs read of the trashed photos' JSONs at these source paths.
    public func trashedTakeoutJSONs(atSourcePaths paths: [String]) async throws -> [TrashedTakeoutJSON] {
        guard !paths.isEmpty else { return [] }
        return try await read { db in
            try TrashedTakeoutJSON.fetchAll(db, sql: """
                SELECT * FROM takeout_trashed WHERE source_path IN (\(paths.map { _ in "?" }.joined(separator: ",")))
                """, arguments: StatementArguments(paths))
        }
    }

    public func saveTrashedTakeoutJSONs(_ jsons: [TrashedTakeoutJSON]) async throws {
        guard !jsons.isEmpty else { return }
        try await write { db in
            for json in jsons { try json.insert(db, onConflict: .replace) }
        }
    }
}
