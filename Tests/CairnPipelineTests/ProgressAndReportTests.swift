import CairnCore
@testable import CairnPipeline
import Foundation
import Testing

@Suite("Progress, outcomes, crash-loop guard")
struct ProgressAndReportTests {
    @Test("progress weighs bytes for transfer and items elsewhere, never decreases, ends at 1")
    func progressMath() {
        var weights = ProgressWeights()
        weights = ProgressWeights(transfer: 0.5, metadata: 0.5, thumbnail: 0, synthesis: 0)
        var tracker = PipelineProgressTracker(weights: weights)
        let big = item(1, .video, bytes: 900)
        let small = item(2, .video, bytes: 100)
        tracker.register(big, route: .withoutClip, state: .queued, finished: false)
        tracker.register(small, route: .withoutClip, state: .queued, finished: false)
        #expect(tracker.snapshot().fraction == 0)
        tracker.update(big.id, to: .transferring, finished: false)
        tracker.update(big.id, to: .probing, finished: false)
        // 900 of 1000 bytes transferred (0.9 x 0.5), no item probed yet.
        #expect(abs(tracker.snapshot().fraction - 0.45) < 1e-9)
        tracker.update(small.id, to: .failed(ItemFailure(phase: .transfer, reason: "x", attempts: 1, retryable: true)),
                       finished: false)
        #expect(abs(tracker.snapshot().fraction - 0.45) < 1e-9)
        tracker.update(small.id, to: .failed(ItemFailure(phase: .transfer, reason: "x", attempts: 3, retryable: true)),
                       finished: true)
        // A final failure credits its remaining lanes: 1.0 x 0.5 + 0.5 x 0.5.
        #expect(abs(tracker.snapshot().fraction - 0.75) < 1e-9)
        tracker.update(big.id, to: .ready, finished: true)
        let end = tracker.snapshot()
        #expect(end.fraction == 1)
        #expect(end.count(.ready) == 1 && end.count(.failed) == 1 && end.totalItems == 2)
    }

    @Test("an item resumed past transfer already counts its bytes")
    func resumedItemsCount() {
        var tracker = PipelineProgressTracker()
        tracker.register(item(1, bytes: 10), route: .withClip, state: .thumbnailing, finished: false)
        tracker.register(item(2, bytes: 10), route: .withClip, state: .ready, finished: true)
        let snapshot = tracker.snapshot()
        // Item 1: transfer + metadata done; item 2 all done. (0.4*1 + 0.1*1 + 0.3*0.5 + 0.2*0.5) / 1.0
        #expect(abs(snapshot.fraction - 0.75) < 1e-9)
    }

    @Test("an outcome report counts its entries by kind")
    func outcomeReport() throws {
        let report = OutcomeReport(entries: [
            FileOutcomeEntry(path: "b.jpg", outcome: .imported),
            FileOutcomeEntry(path: "a.jpg", outcome: .imported),
            FileOutcomeEntry(path: "bad.jpg", outcome: .failed(phase: .metadata, reason: "invalid data")),
            FileOutcomeEntry(path: "late.mov", outcome: .unfinished(resumeAt: .thumbnail)),
        ])
        #expect(report.count(.imported) == 2)
        #expect(report.count(.failed) == 1)
        #expect(report.count(.duplicate) == 0)
    }

    @Test("run completions map onto exit statuses")
    func exitStatuses() {
        func status(_ completion: RunOutcome) -> CairnCore.ExitStatus {
            PipelineRunResult(completion: completion, report: OutcomeReport(entries: []),
                              progress: PipelineProgress(totalItems: 0, counts: [:], fraction: 1),
                              statistics: LaneStatistics()).exitStatus
        }
        #expect(status(.success) == .success)
        #expect(status(.someFailed) == .someFilesFailed)
        #expect(status(.stoppedAtErrorLimit) == .someFilesFailed)
        #expect(status(.interrupted) == .interrupted)
    }

    @Test("crash-loop guard: a kill blames nobody; a crash makes suspects; a crash while alone fails the item")
    func crashLoopGuard() throws {
        let clean = ItemRecord(item: item(1), state: .probing)
        #expect(CrashLoopGuard.recover(clean, after: .crashed) == nil)

        // Killed (no fault recorded): resumed as it stood, not a suspect, however many were in flight.
        let inFlight = ItemRecord(item: item(2), state: .thumbnailing, inFlight: true)
        let killed = try #require(CrashLoopGuard.recover(inFlight, after: .killed))
        #expect(killed.state == .thumbnailing && !killed.inFlight && killed.killCount == 1 && killed.crashCount == 0)
        #expect(!CrashLoopGuard.isSuspect(killed))

        // Crashed (a fault recorded) while in flight among others: a suspect, not failed.
        let crashed = try #require(CrashLoopGuard.recover(inFlight, after: .crashed))
        #expect(crashed.state == .thumbnailing && crashed.crashCount == 1 && CrashLoopGuard.isSuspect(crashed))

        // Crashed again while it ran alone: the culprit.
        var alone = crashed
        alone.inFlight = true
        alone.runsAlone = true
        let culprit = try #require(CrashLoopGuard.recover(alone, after: .crashed))
        #expect(culprit.state == .failed(ItemFailure(phase: .thumbnail, reason: CrashLoopGuard.reason,
                                                     attempts: 2, retryable: false)))
        #expect(culprit.state.isTerminal && !CrashLoopGuard.isSuspect(culprit) && CrashLoopGuard.failedIt(culprit))

        // Killed while alone: not enough, until it has happened `killsBeforeFailure` times in a row.
        let aloneKilled = try #require(CrashLoopGuard.recover(alone, after: .killed))
        #expect(!aloneKilled.state.isTerminal && CrashLoopGuard.isSuspect(aloneKilled))
        var record = inFlight
        for death in 1...CrashLoopGuard.killsBeforeFailure {
            record.inFlight = true
            record.runsAlone = CrashLoopGuard.isSuspect(record)
            record = try #require(CrashLoopGuard.recover(record, after: .killed))
            #expect(CrashLoopGuard.isSuspect(record) == (death >= CrashLoopGuard.killsBeforeSuspicion
                                                         && death < CrashLoopGuard.killsBeforeFailure))
            #expect(record.state.isTerminal == (death == CrashLoopGuard.killsBeforeFailure))
        }

        let (all, changed) = CrashLoopGuard.recover([clean, alone], after: .crashed)
        #expect(all.map(\.id) == [1, 2] && changed.map(\.id) == [2])
    }
}
