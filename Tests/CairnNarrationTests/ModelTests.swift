import CairnCore
import Foundation
import Testing
@testable import CairnNarration

@Suite struct RingBufferTests {
    @Test func keepsTheNewestUpToCapacityNewestFirst() {
        var buffer = RingBuffer<Int>(capacity: 50)
        for value in 1...120 { buffer.append(value) }
        #expect(buffer.count == 50)
        #expect(buffer.newestFirst == Array((71...120).reversed()))
    }

    @Test func partlyFilledBufferIsNewestFirst() {
        var buffer = RingBuffer<String>(capacity: 4)
        buffer.append("a"); buffer.append("b")
        #expect(buffer.newestFirst == ["b", "a"])
        #expect(RingBuffer<String>(capacity: 4).newestFirst == [])
    }

    @Test func activityFeedOfTheStateIsCappedAtFifty() {
        var state = NarrationState()
        state.apply(record(.runStart(command: "run"), at: 0))
        for index in 0..<80 { state.apply(record(.note("note \(index)", phase: nil), at: Double(index))) }
        #expect(state.activity.count == NarrationState.defaultActivityCapacity)
        #expect(state.activity.newestFirst.first?.detail == "note 79")
        #expect(state.activity.newestFirst.last?.detail == "note 30")
        let times = state.activity.newestFirst.map(\.time)
        #expect(times == times.sorted(by: >))
    }
}

@Suite struct ThrottleTests {
    @Test func firesAtMostOncePerInterval() {
        var throttle = Throttle(interval: 0.25)
        let fired = [0, 0.1, 0.2, 0.25, 0.3, 0.49, 0.5, 1.0].filter {
            throttle.shouldFire(at: testEpoch.addingTimeInterval($0))
        }
        #expect(fired == [0, 0.25, 0.5, 1.0])
    }

    @Test func aClockSteppingBackDoesNotSilenceIt() {
        var throttle = Throttle(interval: 0.25)
        let first = throttle.shouldFire(at: testEpoch)
        let afterStepBack = throttle.shouldFire(at: testEpoch.addingTimeInterval(-3600))
        #expect(first && afterStepBack)
    }
}

@Suite struct PhaseTimelineTests {
    @Test func keepsStartOrderAndDurations() {
        var timeline = PhaseTimeline()
        timeline.start(.preparing, at: testEpoch)
        timeline.end(.preparing, at: testEpoch.addingTimeInterval(2))
        timeline.start(.hashing, at: testEpoch.addingTimeInterval(2))
        #expect(timeline.entries.map(\.phase) == [.preparing, .hashing])
        #expect(timeline.entries.map(\.durationSeconds) == [2, nil])
        #expect(timeline.currentPhase == .hashing)
        #expect(timeline.entries[1].elapsed(at: testEpoch.addingTimeInterval(5)) == 3)
    }

    @Test func anOpenPhaseStartedAgainIsIgnoredAndEndAllClosesEveryPhase() {
        var timeline = PhaseTimeline()
        timeline.start(.preparing, at: testEpoch)
        timeline.start(.hashing, at: testEpoch.addingTimeInterval(1))
        #expect(timeline.currentPhase == .hashing)
        timeline.start(.hashing, at: testEpoch.addingTimeInterval(2))  // already open: ignored
        #expect(timeline.entries.count == 2)
        timeline.endAll(at: testEpoch.addingTimeInterval(4))
        #expect(timeline.currentPhase == nil)
        #expect(timeline.entries.map(\.durationSeconds) == [4, 3])
    }
}

@Suite struct ProgressTrackerTests {
    @Test func indeterminateUntilTheTotalIsKnown() {
        var tracker = ProgressTracker(phase: .hashing)
        tracker.advance(items: 3)
        #expect(tracker.snapshot(at: testEpoch).fraction == nil)
        tracker.setTotal(items: 12)
        let snapshot = tracker.snapshot(at: testEpoch)
        #expect(snapshot.fraction == 0.25)
        #expect(snapshot.total == 12)
    }

    @Test func clampsToOneWhenTheCountOvershoots() {
        var tracker = ProgressTracker(phase: .importing)
        tracker.setTotal(items: 4)
        tracker.advance(items: 9)
        #expect(tracker.snapshot(at: testEpoch).fraction == 1)
        var empty = ProgressTracker(phase: .importing)
        empty.setTotal(items: 0)
        #expect(empty.snapshot(at: testEpoch).fraction == 1)
    }

    @Test func neverDecreasesWhenTheTotalGrows() {
        var tracker = ProgressTracker(phase: .hashing)
        tracker.setTotal(items: 10)
        tracker.advance(items: 8)
        #expect(tracker.snapshot(at: testEpoch).fraction == 0.8)
        tracker.setTotal(items: 100)
        #expect(tracker.snapshot(at: testEpoch).fraction == 0.8)
        tracker.advance(items: 82)
        #expect(tracker.snapshot(at: testEpoch).fraction == 0.9)
    }

    @Test func bytesWeighMoreThanItems() {
        var tracker = ProgressTracker(phase: .hashing)
        tracker.setTotal(items: 2, bytes: 1_000)
        tracker.advance(items: 1, bytes: 900)
        #expect(tracker.snapshot(at: testEpoch).fraction == 0.9)
    }

    @Test func etaAppearsOnceTheRateIsStable() throws {
        var tracker = ProgressTracker(phase: .hashing)
        tracker.setTotal(items: 1_000)
        var etas: [Double?] = []
        for second in 0...4 {
            if second > 0 { tracker.advance(items: 100) }
            etas.append(tracker.snapshot(at: testEpoch.addingTimeInterval(Double(second))).etaSeconds)
        }
        // Samples at 1, 2, 3 s make the rate stable: 100 items/s, 700 left at 3 s, 600 at 4 s.
        #expect(etas[0] == nil && etas[1] == nil && etas[2] == nil)
        #expect(try #require(etas[3]) == 7)
        #expect(try #require(etas[4]) == 6)
        tracker.finish()
        #expect(tracker.snapshot(at: testEpoch.addingTimeInterval(5)).etaSeconds == 0)
    }

    @Test func burstsCloserThanASecondAreFoldedIntoOneSample() {
        var rate = RateEstimator()
        rate.record(units: 0, at: testEpoch)
        rate.record(units: 500, at: testEpoch.addingTimeInterval(0.1))
        #expect(rate.rate == nil)
        rate.record(units: 600, at: testEpoch.addingTimeInterval(2))
        #expect(rate.rate == 300)
        #expect(!rate.isStable)
    }
}

@Suite struct NarrationStateTests {
    @Test func runEndRecordsOutcomeAndLastSuccess() {
        var state = NarrationState()
        state.apply(record(.runStart(command: "run"), at: 0))
        state.apply(record(.phaseStart(.preparing, detail: nil), at: 0))
        #expect(state.status == .syncing)
        state.apply(runEnd(.success, at: 5))
        #expect(state.status == .success)
        #expect(state.lastSuccessfulSync == testEpoch.addingTimeInterval(5))
        #expect(state.timeline.currentPhase == nil)

        state.apply(record(.runStart(command: "run"), at: 60))
        state.apply(runEnd(.failed, at: 61, message: "source folder is gone"))
        #expect(state.status == .failed(message: "source folder is gone", needsAuth: false))
        #expect(state.lastSuccessfulSync == testEpoch.addingTimeInterval(5))
    }

    @Test func fileErrorsBecomeFailuresInTheSummary() throws {
        var state = NarrationState()
        state.apply(record(.runStart(command: "run"), at: 0))
        state.apply(record(.error("truncated JPEG", phase: nil, file: "/src/a.jpg"), at: 1))
        state.apply(record(.error("disk full", phase: nil, file: nil), at: 2))
        let summary = try #require(state.summary())
        #expect(summary.failures == [FileFailure(path: "/src/a.jpg", reason: "truncated JPEG")])
        #expect(state.activity.newestFirst.first?.detail == "disk full")
    }
}
