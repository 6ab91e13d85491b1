import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What every catalog backend must do with the destination's drift: each test runs on every `CatalogBackend` with
/// the same expectations.
@Suite struct DriftContractTests {
    typealias Tables = RunTablesContractTests
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    @Test(arguments: CatalogBackend.allCases)
    func aFullCheckReplacesTheDriftATrashCheckAddsToIt(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            #expect(try await catalog.lastDestinationCheck(.trash) == nil)
            #expect(try await catalog.destinationDrift().isEmpty)
            let one = DriftRecord(checksum: Tables.checksum(1), state: .trashed, seenAt: Self.moment)
            let two = DriftRecord(checksum: Tables.checksum(2), state: .missing, seenAt: Self.moment)
            try await catalog.recordDestinationCheck(.full, found: [one, two], at: Self.moment)
            #expect(try await catalog.destinationDrift() == [one, two])
            #expect(try await catalog.lastDestinationCheck(.full) == Self.moment)
            // A full check counts as a check of the trash too.
            #expect(try await catalog.lastDestinationCheck(.trash) == Self.moment)

            // A trash check adds; what it finds again keeps its first sighting.
            let later = Self.moment.addingTimeInterval(3_600)
            let three = DriftRecord(checksum: Tables.checksum(3), state: .trashed, seenAt: later)
            try await catalog.recordDestinationCheck(.trash, found: [three, DriftRecord(checksum: one.checksum, state: .trashed, seenAt: later)],
                                                     at: later)
            #expect(try await catalog.destinationDrift() == [one, two, three])
            #expect(try await catalog.lastDestinationCheck(.full) == Self.moment)
            #expect(try await catalog.lastDestinationCheck(.trash) == later)

            // Mended drift goes; the next full check's findings are all that is left.
            try await catalog.clearDrift([three.checksum])
            #expect(try await catalog.destinationDrift() == [one, two])
            let next = later.addingTimeInterval(86_400)
            let purged = DriftRecord(checksum: one.checksum, state: .missing, seenAt: next)
            try await catalog.recordDestinationCheck(.full, found: [purged], at: next)
            #expect(try await catalog.destinationDrift() == [purged])
            #expect(try await catalog.lastDestinationCheck(.full) == next)
        }
    }

    /// Content the destination lost loses its asset, its drift and its Live Photo link, so the next walk of a source
    /// that holds it takes it for new content.
    @Test(arguments: CatalogBackend.allCases)
    func lostContentIsForgottenSoTheNextWalkBringsItInAgain(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/src")
            try await catalog.updateSnapshot(sourceID: source, upserting: [
                Tables.file("a.jpg", inode: 1, checksum: Tables.checksum(1)),
                Tables.file("b.mov", inode: 2, checksum: Tables.checksum(2)),
            ], removing: [])
            try await catalog.insertAssets([Tables.asset(1, firstSourcePath: "a.jpg"), Tables.asset(2, firstSourcePath: "b.mov")])
            try await catalog.markSnapshotContentInLibrary(sourceID: source)
            let pair = AssetPairRecord(still: Tables.checksum(1), motion: Tables.checksum(2), basis: "name and time",
                                       pairedAt: Self.moment)
            try await catalog.savePairs([pair])
            try await catalog.markPairsLinked([pair.still], at: Self.moment)
            try await catalog.recordDestinationCheck(
                .full, found: [DriftRecord(checksum: Tables.checksum(2), state: .missing, seenAt: Self.moment)], at: Self.moment)

            try await catalog.forgetLostContent([Tables.checksum(2)])
            #expect(try await catalog.asset(Tables.checksum(2)) == nil)
            #expect(try await catalog.asset(Tables.checksum(1)) != nil)
            #expect(try await catalog.destinationDrift().isEmpty)
            #expect(try await catalog.pairsAwaitingLink() == [pair])
            try await catalog.withRunTables(sourceID: source) { tables in
                try await tables.append([Tables.file("a.jpg", inode: 1), Tables.file("b.mov", inode: 2)])
                #expect(try await tables.matchSnapshot().toHash == 0)
                #expect(try await tables.classify() == ContentCounts(newContent: 1, newBytes: 10, duplicates: 0, unchanged: 1))
                #expect(try await tables.newContent(after: 0, limit: 10).map(\.record.relativePath) == ["b.mov"])
            }
        }
    }
}
