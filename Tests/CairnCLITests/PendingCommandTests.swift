import CairnCatalog
import CairnCore
import CairnReconcile
import CairnSync
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary
import CairnReconcileOracle

@Suite struct PendingCommandTests {
    /// Two syncs' worth of reconciliation, committed as a sync commits it: b.jpg is deleted at the source in the second.
    func reconcileTwice(_ fixture: ImportedLibrary) throws -> (a: Checksum, b: Checksum, secondRun: String, now: Date) {
        let (_, catalog) = try fixture.open()
        let store = ReconcileStore(catalog: catalog)
        let sourceID = try catalog.sourceID(forRoot: URL(fileURLWithPath: fixture.source).resolvingSymlinksInPath().path)
        let a = try fixture.asset("a.jpg", in: catalog).checksum, b = try fixture.asset("b.jpg", in: catalog).checksum
        let scan = SourceScanFacts(sourceRoot: fixture.source)
        // A whole second: the listing prints dates to the second, and a fraction may round either way.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        var previous: [String: Checksum] = [:]
        for (runID, current, isFirstRun) in [("run-1", ["a.jpg": a, "b.jpg": b], true), ("run-2", ["a.jpg": a], false)] {
            let outcome = Reconciler.reconcile(.init(
                state: try store.loadState(sourceID: sourceID), previous: previous, current: current,
                library: try catalog.assetChecksums(), scan: scan, now: now, runID: runID, isFirstRun: isFirstRun,
                acceptMassVanish: true))
            try store.commit(outcome, sourceID: sourceID, current: current, scan: scan)
            previous = current
        }
        return (a, b, "run-2", now)
    }

    @Test func listShowsQuarantineWithTheEligibleDate() throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, now) = try reconcileTwice(fixture)
        let list = try fixture.cairn(["pending", "list"])
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains("(as of run run-2): 1 pending"))
        let eligible = now.addingTimeInterval(14 * 86_400).formatted(.iso8601)
        #expect(list.standardOutput.contains("quarantine \(b.hex)  b.jpg  confirmed \(now.formatted(.iso8601))  eligible \(eligible)"))
    }

    @Test func excludeAllConfirmedSinceARunEmptiesTheListAndIsRemembered() throws {
        let fixture = try ImportedLibrary()
        let (_, b, run, _) = try reconcileTwice(fixture)
        let exclude = try fixture.cairn(["pending", "exclude", "--all-confirmed-since", run])
        #expect(exclude.status == 0, "\(exclude.standardError)")
        #expect(exclude.standardOutput.contains("Excluded 1 deletion(s) confirmed since run \(run)"))
        #expect(try fixture.cairn(["pending", "list"]).standardOutput.contains("0 pending"))
        let (_, catalog) = try fixture.open()
        let store = ReconcileStore(catalog: catalog)
        let sourceID = try #require(try store.sources().first?.id)
        #expect(try store.loadState(sourceID: sourceID).exclusions == [b])
    }

    @Test func approveRecordsObservedChecksumsAndRefusesUnknownOnes() throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, _) = try reconcileTwice(fixture)
        let approve = try fixture.cairn(["pending", "approve", b.hex.uppercased()])
        #expect(approve.status == 0, "\(approve.standardError)")
        #expect(try fixture.cairn(["pending", "list"]).standardOutput.contains("approved   \(b.hex)"))

        let unknown = try fixture.cairn(["pending", "approve", String(repeating: "f", count: 40)])
        #expect(unknown.status == ExitStatus.failure.rawValue && unknown.standardError.contains("was never seen"))
        let malformed = try fixture.cairn(["pending", "approve", "b.jpg"])
        #expect(malformed.status == ExitStatus.usage.rawValue && malformed.standardError.contains("not a SHA1"))
        let both = try fixture.cairn(["pending", "exclude", b.hex, "--all-confirmed-since", "run-2"])
        #expect(both.status == ExitStatus.usage.rawValue)
        let otherSource = try fixture.cairn(["pending", "exclude", b.hex, "--source", "/nowhere"])
        #expect(otherSource.status == ExitStatus.failure.rawValue && otherSource.standardError.contains("not a source of this library"))
    }

    @Test func aHeldLockStopsApproveAtOnce() throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, _) = try reconcileTwice(fixture)
        let lock = try LibraryLock(libraryRoot: fixture.root)
        let result = try fixture.cairn(["pending", "approve", b.hex])
        withExtendedLifetime(lock) {}
        #expect(result.status == ExitStatus.libraryLocked.rawValue && result.standardError.contains("is locked"))
    }
}
