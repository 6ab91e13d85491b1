import CairnCore
@testable import CairnPipeline
import Testing

/// A page source over fixed pages that keeps the lines handed back with each ask.
final class FixedPages: PlannedPageSource, @unchecked Sendable {
    let refillBelow: Int
    private let state: Locked<(pages: [[ItemRecord]], handedOver: [FileOutcomeEntry], asks: Int)>
    private let failure: (any Error)?

    init(_ pages: [[ItemRecord]], refillBelow: Int, failingAfter failure: (any Error)? = nil) {
        self.refillBelow = refillBelow
        self.failure = failure
        state = Locked((pages, [], 0))
    }

    var handedOver: [FileOutcomeEntry] { state.current.handedOver }
    var asks: Int { state.current.asks }

    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]? {
        let next = state.withValue { value -> [ItemRecord]? in
            value.handedOver += ended
            value.asks += 1
            return value.pages.isEmpty ? nil : value.pages.removeFirst()
        }
        if next == nil, let failure { throw failure }
        return next
    }
}

@Suite("Pipeline scheduler fed by pages", .timeLimit(.minutes(1)))
struct PagedSchedulerTests {
    /// The lanes never drain at a page boundary: while the first page's clip is still being made, the next page
    /// is asked for and its transfers run to their end.
    @Test func theNextPagesTransfersRunWhileTheClipsBeforeThemAreStillBeingMade() async throws {
        let signal = TestSignal()
        let clips = Gate(signal: signal)
        let harness = Harness(signal: signal) { _, lane, _ in
            if lane == .synthesis { try await clips.pass() }
        }
        // A still (its clip held) and two videos, then three videos.
        let first = [ItemRecord(item: item(1, .photo)), ItemRecord(item: item(2, .video)), ItemRecord(item: item(3, .video))]
        let second = (4...6).map { ItemRecord(item: item(Int64($0), .video)) }
        let pages = FixedPages([first, second], refillBelow: 3)
        async let running = harness.scheduler.run(pages: pages)

        await signal.wait { harness.stages.finished(.transfer) == 6 && clips.arrivals == 1 }
        #expect(harness.stages.finished(.synthesis) == 0, "the first page's clip is still being made")
        // The lane runs them at once: the order they record their starts in is theirs.
        #expect(harness.stages.starts(.transfer).suffix(3).sorted() == [4, 5, 6])
        clips.open()
        let result = try await running

        #expect(result.completion == .success)
        let lines = pages.handedOver + result.report.entries
        #expect(lines.map(\.path).sorted() == (first + second).map(\.item.relativePath).sorted())
        #expect(lines.allSatisfy { $0.outcome == .imported })
        #expect(await harness.store.all().count == 6)
        #expect(await harness.store.all().allSatisfy { $0.state == .ready })
    }

    struct PlanningFailed: Error {}

    /// A source that cannot plan its next page stops the run like a failing store, and the run throws its reason;
    /// the items already taken on end as they stood.
    @Test func aPageThatCannotBePlannedStopsTheRunAndIsRethrown() async throws {
        let harness = Harness()
        let pages = FixedPages([placeholders(2, .video)], refillBelow: 2, failingAfter: PlanningFailed())
        await #expect(throws: PlanningFailed.self) { try await harness.scheduler.run(pages: pages) }
        #expect(pages.asks == 2)
    }
}
