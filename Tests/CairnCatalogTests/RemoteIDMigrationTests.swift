import CairnCore
import CairnTesting
import GRDB
import Testing

@testable import CairnCatalog

/// "v14: asset remote id": an Immich asset id kept as `immich:<id>` in original_path moves to a column of its own;
/// a library's originals keep their paths.
@Suite struct RemoteIDMigrationTests {
    @Test func anImmichIDLeavesTheOriginalPathForItsOwnColumn() throws {
        let folder = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: folder.subpath("catalog.sqlite"))
        try Migrations.migrator.migrate(queue, upTo: "v13: destination drift")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO asset (sha1, kind, size, original_extension, first_source_path, original_path, imported_at)
                VALUES ('\(String(repeating: "a", count: 40))', 'photo', 1, 'jpg', 'a.jpg', 'immich:id-a', '2026-01-01'),
                       ('\(String(repeating: "b", count: 40))', 'photo', 1, 'jpg', 'b.jpg', 'originals/bb/b.jpg', '2026-01-01');
                INSERT INTO trashed_asset (sha1, trash_run_id, trashed_at, library_paths, kind, size, original_extension,
                                           first_source_path, original_path, imported_at)
                VALUES ('\(String(repeating: "c", count: 40))', 'run-1', '2026-01-02', '[]', 'photo', 1, 'jpg', 'c.jpg',
                        'immich:id-c', '2026-01-01');
                """)
        }
        try Migrations.migrator.migrate(queue)
        try queue.read { db in
            let assets = try Row.fetchAll(db, sql: "SELECT first_source_path, original_path, remote_id FROM asset ORDER BY sha1")
            #expect(assets.map { [$0[0], $0[1], $0[2] as String?] } == [["a.jpg", "", "id-a"], ["b.jpg", "originals/bb/b.jpg", nil]])
            let trashed = try Row.fetchOne(db, sql: "SELECT original_path, remote_id FROM trashed_asset")
            #expect(trashed?[0] == "" && trashed?[1] == "id-c")
            // Read back through the record every catalog read uses.
            #expect(try AssetRecord.fetchOne(db, key: Checksum(hex: String(repeating: "a", count: 40))!)?.remoteID == "id-a")
        }
    }
}
