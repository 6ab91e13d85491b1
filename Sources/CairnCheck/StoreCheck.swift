import CairnCatalog
import CairnCore
import CairnStore

/// `cairn check`: the catalog's files and a store's objects compared, one top folder at a time, as a merge of two
/// bytewise orders: the store listed a page at a time, the catalog read a shard (`ab`) at a time, so memory holds
/// one page and one shard's rows however many millions of files the library has. Each finding goes to `onFinding`
/// as it is found (which may mend it); the report counts them.
public struct StoreCheck: Sendable {
    /// What the comparison found of one file.
    public enum Finding: Sendable, Equatable {
        /// In the store, named by no file of the catalog (a run killed between its put and its commit).
        case orphan(StoredObject)
        /// Named by the catalog, not in the store.
        case missing(CatalogFile)
        /// In both, with another size than the catalog's.
        case sizeMismatch(CatalogFile, stored: Int64)
    }

    public struct Report: Sendable, Equatable {
        /// Files the catalog names, and objects the store holds, under the folders checked.
        public var catalogFiles = 0
        public var storedObjects = 0
        public var orphans = 0
        public var missing = 0
        public var sizeMismatches = 0
        /// Objects of the trash's assets, kept in a store until `cairn trash purge`: known, so no orphans.
        public var trashedObjects = 0

        public init() {}
    }

    public let catalog: any StoredFileCatalog
    public let store: any ObjectStore
    /// Keys a listing page holds.
    public var pageSize = 1000
    /// Told each finding, in order, before the check goes on.
    public var onFinding: @Sendable (Finding) async -> Void = { _ in }
    /// The paths of the trash's assets (`trashedPaths`): a library on a store keeps their objects where they were
    /// until a purge. (A folder library's trash is under `trash/`, which is not checked.)
    public var trashed: Set<String> = []

    public init(catalog: any StoredFileCatalog, store: any ObjectStore) {
        self.catalog = catalog
        self.store = store
    }

    public func run(folders: [StoredFolder] = StoredFolder.allCases) async throws -> Report {
        var report = Report()
        for folder in folders { try await check(folder, into: &report) }
        return report
    }

    /// The merge of one folder: every stored key is matched against the catalog's rows of its shard, which are
    /// read when the listing reaches the shard's keys; shards the listing skips are read all the same (their files
    /// are missing).
    private func check(_ folder: StoredFolder, into report: inout Report) async throws {
        let prefix = folder.rawValue + "/"
        var shards = ShardCursor(catalog: catalog, folder: folder)
        var after: ObjectKey?
        while true {
            let page = try await store.list(prefix: prefix, after: after, limit: pageSize)
            guard let last = page.last else { break }
            for object in page {
                if let after, !(after < object.key) {
                    throw StoreError(.server, key: object.key.text,
                                     "\(store.description) listed keys out of byte order (after \(after.text))")
                }
                after = object.key
                report.storedObjects += 1
                guard let shard = Self.shard(of: object.key.text, under: prefix) else {
                    await note(.orphan(object), &report)
                    continue
                }
                // Every shard before this key's is done: what its rows still name is missing.
                for file in try await shards.advance(to: shard) { await note(.missing(file), &report) }
                for file in shards.rows(before: object.key.text) { await note(.missing(file), &report) }
                if let file = shards.take(object.key.text) {
                    report.catalogFiles += 1
                    if let size = file.size, size != object.size {
                        await note(.sizeMismatch(file, stored: object.size), &report)
                    }
                } else if trashed.contains(object.key.text) {
                    report.trashedObjects += 1
                } else {
                    await note(.orphan(object), &report)
                }
            }
            after = last.key
        }
        for file in try await shards.advance(to: nil) { await note(.missing(file), &report) }
    }

    /// The paths the catalog's trash holds, for `trashed`: a set as large as the trash, not the library.
    public static func trashedPaths(_ catalog: any TrashCatalog) async throws -> Set<String> {
        Set(try await catalog.trashedAssets(runID: nil).flatMap(\.libraryPaths))
    }

    private func note(_ finding: Finding, _ report: inout Report) async {
        switch finding {
        case .missing: report.catalogFiles += 1; report.missing += 1
        case .sizeMismatch: report.sizeMismatches += 1
        case .orphan: report.orphans += 1
        }
        await onFinding(finding)
    }

    /// `ab` for `originals/ab/…` (two lowercase hex digits and a slash after the prefix), else nil.
    static func shard(of key: String, under prefix: String) -> String? {
        let rest = key.utf8.dropFirst(prefix.utf8.count)
        guard rest.count > 3 else { return nil }
        let bytes = Array(rest.prefix(3))
        guard bytes[2] == UInt8(ascii: "/"), bytes[..<2].allSatisfy({ Checksum.nibble($0) != nil && !(65 ... 70).contains($0) })
        else { return nil }
        return String(decoding: bytes[..<2], as: UTF8.self)
    }
}

/// The catalog's rows of a folder, a shard at a time in shard order, and where the merge stands in the current one.
private struct ShardCursor {
    let catalog: any StoredFileCatalog
    let folder: StoredFolder
    /// The next shard to read (0 ... 256).
    private var next = 0
    private var current: String?
    private var rows: [CatalogFile] = []
    private var position = 0

    init(catalog: any StoredFileCatalog, folder: StoredFolder) {
        self.catalog = catalog
        self.folder = folder
    }

    /// Moves to `shard` (nil: past the last), returning what the shards left behind still named. Rows of a shard
    /// whose paths lie outside its folder (none that cairn writes) stay with it and are missing when it ends.
    mutating func advance(to shard: String?) async throws -> [CatalogFile] {
        guard shard != current else { return [] }
        var left = Array(rows[position...])
        rows = []
        position = 0
        current = nil
        let target = shard.flatMap { Int($0, radix: 16) } ?? 256
        while next <= target, next < 256 {
            let name = (next < 16 ? "0" : "") + String(next, radix: 16)
            next += 1
            let files = try await catalog.storedFiles(in: folder, shard: name)
            if next - 1 == target {
                rows = files
                current = name
            } else {
                left += files
            }
        }
        return left
    }

    /// The current shard's rows whose paths come before `key`, consumed.
    mutating func rows(before key: String) -> ArraySlice<CatalogFile> {
        let start = position
        while position < rows.count, PathOrder.precedes(rows[position].path, key) { position += 1 }
        return rows[start ..< position]
    }

    /// The current row if its path is `key`, consumed.
    mutating func take(_ key: String) -> CatalogFile? {
        guard position < rows.count, rows[position].path == key else { return nil }
        position += 1
        return rows[position - 1]
    }
}
