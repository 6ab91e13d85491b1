import CSQLite
import CairnCore
import Foundation
import GRDB

/// Small aggregate reads for metrics and the status page: a handful of rows whatever the library's size.
extension SQLiteCatalog {
    /// Items and bytes of originals by kind: of the whole library, or of what one run brought in.
    public func assetTally(broughtInBy runID: String?) async throws -> [MediaKind: (items: Int, bytes: Int64)] {
        try await read { db in
            var sql = "SELECT kind, count(*) AS items, coalesce(sum(size), 0) AS bytes FROM asset"
            var arguments: StatementArguments = []
            if let runID {
                sql += " WHERE run_id = ?"
                arguments = [runID]
            }
            sql += " GROUP BY kind"
            var tally: [MediaKind: (items: Int, bytes: Int64)] = [:]
            for row in try KindTallyRow.fetchAll(db, sql: sql, arguments: arguments) {
                guard let kind = MediaKind(rawValue: row.kind) else { continue }
                tally[kind] = (row.items, row.bytes)
            }
            return tally
        }
    }

    /// The newest run that ended in one of `outcomes`.
    public func lastRun(endedIn outcomes: [RunOutcome]) async throws -> RunRecord? {
        try await read { db in
            try RunRecord.filter(outcomes.map(\.rawValue).contains(RunRecord.Columns.outcome))
                .order(RunRecord.Columns.startedAt.desc, RunRecord.Columns.id.desc).fetchOne(db)
        }
    }

    /// Which of `checksums` have a thumbnail.
    public func thumbnailed(_ checksums: [Checksum]) async throws -> Set<Checksum> {
        guard !checksums.isEmpty else { return [] }
        return try await read { db in
            let hexes = try String.fetchAll(db, DerivedFileRow.select(DerivedFileRow.Columns.sha1)
                .filter(DerivedFileRow.Columns.role == DerivedFileRecord.Role.thumbnail.rawValue)
                .filter(checksums.map(\.hex).contains(DerivedFileRow.Columns.sha1)))
            return Set(hexes.compactMap(Checksum.init(hex:)))
        }
    }

    /// The newest assets brought into the library, newest first.
    public func newestAssets(limit: Int) async throws -> [AssetRecord] {
        try await read { db in
            try AssetRecord.order(Column("imported_at").desc, AssetRecord.Columns.checksum).limit(limit).fetchAll(db)
        }
    }
}

extension SQLiteCatalog {
    /// The SQLite library cairn runs with, as it reports itself ("3.40.1").
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }
}
