import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import GRDB
import Testing

@testable import CairnCatalog

/// The catalog writes and reads dates itself (GRDB's default formatter loads ICU); GRDB's own conversion is the
/// oracle: what either writes, the other reads, as the same text.
@Suite struct StoredDateTests {
    /// Whole milliseconds plus a little, so that GRDB's formatter (which cuts) and `StoredDate` (which rounds)
    /// name the same millisecond.
    static func sampleDates() -> [Date] {
        (0..<500).map { _ in
            Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000_000...4_000_000_000_000)) / 1000 + 0.0002)
        }
    }

    @Test func theTextIsGRDBsOwnAndReadsBackBothWays() throws {
        for date in Self.sampleDates() {
            let ours = StoredDate.text(date)
            #expect(ours.databaseValue == date.databaseValue, "\(date.timeIntervalSince1970)")
            let read = try #require(StoredDate.date(ours.databaseValue))
            #expect(abs(read.timeIntervalSince(date)) < 0.001)
            #expect(abs(try #require(Date.fromDatabaseValue(ours.databaseValue)).timeIntervalSince(read)) < 0.000_001)
        }
        #expect(StoredDate.date(1_700_000_000.5.databaseValue) == Date(timeIntervalSince1970: 1_700_000_000.5))
        #expect(StoredDate.date("2026-11-22".databaseValue) == Timestamp.parse("2026-11-22T00:00:00Z"))
        #expect(StoredDate.date("2026-11-22 05:20:15+02:00".databaseValue) == Timestamp.parse("2026-11-22T03:20:15Z"))
        #expect(StoredDate.date("03:20".databaseValue) == nil && StoredDate.date("soon".databaseValue) == nil)
    }

    /// A record's dates go through `StoredDate` both ways: the column holds GRDB's text and reads back.
    @Test func aRecordsDatesAreStoredAsTextAndReadBack() async throws {
        let directory = try TemporaryDirectory()
        let catalog = try SQLiteCatalog(path: directory.subpath("catalog.sqlite"))
        let importedAt = Date(timeIntervalSince1970: 1_795_317_615.25)
        let asset = AssetRecord(checksum: Checksum(bytes: [UInt8](repeating: 9, count: 20))!, kind: .photo, size: 10,
                                originalExtension: "jpg", firstSourcePath: "a.jpg", originalPath: "originals/09/09/x.jpg",
                                importedAt: importedAt, runID: "r1")
        try await catalog.insertAssets([asset])
        let stored = try await catalog.read { db in try String.fetchOne(db, sql: "SELECT imported_at FROM asset") }
        #expect(stored == "2026-11-22 03:20:15.250")
        #expect(try await catalog.asset(asset.checksum)?.importedAt == importedAt)
    }
}
