import CairnCatalog
import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

/// What every catalog backend must do with the reconciliation stores: the stores' semantics are stated in memory by
/// `ReconcileState.applying`, and each backend, handed the same random deltas, must hold what that says after every
/// one of them.
@Suite struct ReconcileContractTests {
    static let checksums = (1...12).map { Checksum(hex: String(format: "%040x", $0 * 7919))! }
    static let paths = (1...8).map { "DCIM/IMG_\($0).HEIC" }

    static func randomDelta(_ random: inout SplitMix64, step: Int) -> StoreDelta {
        func some<T>(_ values: [T], _ chance: Double) -> [T] { values.filter { _ in random.nextUnit() < chance } }
        var anchors: [String: Checksum] = [:]
        for path in some(paths, 0.2) { anchors[path] = checksums.randomElement(using: &random)! }
        return StoreDelta(observedAdded: some(checksums, 0.3), reappeared: some(checksums, 0.15),
                          confirmedStamped: some(checksums, 0.2),
                          stampedAt: Date(timeIntervalSince1970: 1_795_000_000 + Double(step) * 3600),
                          anchorsAdded: anchors, anchorsReleased: some(paths, 0.15), advanceSnapshot: true)
    }

    @Test(arguments: CatalogBackend.allCases)
    func theStoresHoldWhatTheirSemanticsSayAfterEveryDelta(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            let other = try await catalog.sourceID(forRoot: "/camera")
            var random = SplitMix64(seed: 28)
            var expected = ReconcileState()
            #expect(try await catalog.reconcileState(sourceID: source) == expected)
            for step in 0..<40 {
                let delta = Self.randomDelta(&random, step: step)
                try await catalog.applyReconcileDelta(delta, sourceID: source, runID: "run-\(step)")
                expected = expected.applying(delta)
                let held = try await catalog.reconcileState(sourceID: source)
                #expect(held == expected, "after delta \(step)")
                if held != expected { break }
            }
            #expect(!expected.observed.isEmpty && expected.confirmed.count > 0 && !expected.anchors.byPath.isEmpty,
                    "the deltas exercised every store")
            #expect(try await catalog.reconcileState(sourceID: other) == ReconcileState(), "one source's stores only")
        }
    }

    @Test(arguments: CatalogBackend.allCases)
    func theHealthySnapshotIsReplacedWholeAndTheSourcesFactsAreKept(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let source = try await catalog.sourceID(forRoot: "/photos")
            #expect(try await catalog.healthySnapshot(sourceID: source).isEmpty)
            let first = Dictionary(uniqueKeysWithValues: zip(Self.paths.prefix(5), Self.checksums))
            try await catalog.replaceHealthySnapshot(sourceID: source, with: first)
            #expect(try await catalog.healthySnapshot(sourceID: source) == first)
            var second = first
            second[Self.paths[0]] = nil
            second[Self.paths[1]] = Self.checksums[11]
            second[Self.paths[7]] = Self.checksums[10]
            try await catalog.replaceHealthySnapshot(sourceID: source, with: second)
            #expect(try await catalog.healthySnapshot(sourceID: source) == second)

            #expect(try await catalog.reconcileFacts(sourceID: source) == ReconcileSourceFacts())
            var facts = ReconcileSourceFacts()
            facts.hadMarker = true
            facts.firstRunDone = true
            facts.lastSyncRunID = "20261126T230000Z-bbbb"
            facts.lastHealthyRunID = "20261126T220000Z-aaaa"
            facts.lastHealthyFileCount = 120_345
            facts.lastHealthyScanAt = Date(timeIntervalSince1970: 1_795_003_600)
            try await catalog.saveReconcileFacts(facts, sourceID: source)
            #expect(try await catalog.reconcileFacts(sourceID: source) == facts)
            facts.hadMarker = false
            facts.lastHealthyScanAt = nil
            try await catalog.saveReconcileFacts(facts, sourceID: source)
            #expect(try await catalog.reconcileFacts(sourceID: source) == facts)
        }
    }
}
