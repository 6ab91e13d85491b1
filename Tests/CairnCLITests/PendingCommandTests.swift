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
    func reconcileTwice(_ fixture: ImportedLibrary) async throws -> (a: Checksum, b: Checksum, secondRun: String, now: Date) {
        let (_, catalog) = try fixture.open()
        let sourceID = try await catalog.sourceID(forRoot: URL(fileURLWithPath: fixture.source).resolvingSymlinksInPath().path)
        let a = try await fixture.asset("a.jpg", in: catalog).checksum, b = try await fixture.asset("b.jpg", in: catalog).checksum
        let scan = SourceScanFacts(sourceRoot: fixture.source)
        // A whole second: the listing prints dates to the second, and a fraction may round either way.
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        var previous: [String: Checksum] = [:]
        for (runID, current, isFirstRun) in [("run-1", ["a.jpg": a, "b.jpg": b], true), ("run-2", ["a.jpg": a], false)] {
            let library = try await catalog.assetChecksums()
            let state = try await catalog.reconcileState(sourceID: sourceID)
            let outcome = Reconciler.reconcile(.init(
                state: state, previous: previous, current: current,
                library: library, scan: scan, now: now, runID: runID, isFirstRun: isFirstRun,
                acceptMassVanish: true))
            try await catalog.commit(outcome, sourceID: sourceID, current: current, scan: scan)
            previous = current
        }
        return (a, b, "run-2", now)
    }

    @Test func listShowsQuarantineWithTheEligibleDate() async throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, now) = try await reconcileTwice(fixture)
        let list = try fixture.cairn(["pending", "list"])
        #expect(list.status == 0, "\(list.standardError)")
        #expect(list.standardOutput.contains("(as of run run-2): 1 pending"))
        let eligible = now.addingTimeInterval(14 * 86_400).formatted(.iso8601)
        #expect(list.standardOutput.contains("quarantine \(b.hex)  b.jpg  confirmed \(now.formatted(.iso8601))  eligible \(eligible)"))
    }

    @Test func excludeAllConfirmedSinceARunEmptiesTheListAndIsRemembered() async throws {
        let fixture = try ImportedLibrary()
        let (_, b, run, _) = try await reconcileTwice(fixture)
        let exclude = try fixture.cairn(["pending", "exclude", "--all-confirmed-since", run])
        #expect(exclude.status == 0, "\(exclude.standardError)")
        #expect(exclude.standardOutput.contains("Excluded 1 deletion(s) confirmed since run \(run)"))
        #expect(try fixture.cairn(["pending", "list"]).standardOutput.contains("0 pending"))
        let (_, catalog) = try fixture.open()
        let sourceID = try #require(try await catalog.sources().first?.id)
        #expect(try await catalog.reconcileState(sourceID: sourceID).exclusions == [b])
    }

    @Test func approveRecordsObservedChecksumsAndRefusesUnknownOnes() async throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, _) = try await reconcileTwice(fixture)
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

    @Test func aHeldLockStopsApproveAtOnce() async throws {
        let fixture = try ImportedLibrary()
        let (_, b, _, _) = try await reconcileTwice(fixture)
        let lock = try LibraryLock(libraryRoot: fixture.root)
        let result = try fixture.cairn(["pending", "approve", b.hex])
        withExtendedLifetime(lock) {}
        #expect(result.status == ExitStatus.libraryLocked.rawValue && result.standardError.contains("is locked"))
    }
}
