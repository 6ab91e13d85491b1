import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnNarration

@Suite struct StatusReportTests {
    func successfulRun() -> RunSummary {
        var counts = RunCounts()
        counts.filesSeen = 6_512; counts.hashed = 1_240; counts.new = 318; counts.duplicates = 922
        counts.ready = 316; counts.failed = 2
        return RunSummary(
            runID: "20270115T080000Z-1", command: "sync", startedAt: testEpoch,
            endedAt: testEpoch.addingTimeInterval(72), status: .success,
            timeline: [
                PhaseEntry(phase: .preparing, startedAt: testEpoch, durationSeconds: 0.82),
                PhaseEntry(phase: .hashing, startedAt: testEpoch.addingTimeInterval(1), durationSeconds: 12.4),
            ],
            counts: counts,
            failures: [FileFailure(path: "/src/a.jpg", reason: "truncated JPEG"),
                       FileFailure(path: "/src/b.mov", reason: "no video stream")],
            review: ReviewInfo(pendingCount: 3, quarantinedCount: 5,
                               nextQuarantineEligibility: testEpoch.addingTimeInterval(14 * 86_400)))
    }

    @Test func upToDateWithTimelineCountsFailuresAndReview() {
        let report = StatusReport(lastRun: successfulRun(), lastSuccessfulSync: nil)
        let now = testEpoch.addingTimeInterval(72 + 4 * 60)
        let text = report.text(now: now, utcOffset: utc)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "Up to date · last synced 4 min ago · 2 failed")
        #expect(lines.contains("Last run 20270115T080000Z-1 (sync) · started 2027-01-15 08:00 · took 1m 12s"))
        #expect(lines.contains("  ✓ Preparing        820 ms"))
        #expect(lines.contains("  ✓ Hashing          12.4 s"))
        #expect(lines.contains("  6,512 seen · 1,240 hashed · 318 new · 922 duplicates · 316 ready · 2 failed"))
        #expect(lines.contains("Failed files (2)"))
        #expect(lines.contains("  /src/b.mov: no video stream"))
        #expect(lines.contains("  3 waiting for review · 5 held by quarantine"))
        #expect(text.contains("eligible for trash in 13 days (2027-01-29 08:00)"))
        #expect(!text.containsEscape)
    }

    @Test func failedRunShowsTheReasonAndTheLastSuccess() {
        var run = successfulRun()
        run.status = .failed(message: "source /mnt/card is not mounted", needsAuth: false)
        let earlier = testEpoch.addingTimeInterval(-2 * 86_400)
        let report = StatusReport(lastRun: run, lastSuccessfulSync: earlier)
        let text = report.text(now: testEpoch.addingTimeInterval(3 * 3600), utcOffset: utc)
        #expect(text.hasPrefix("Last sync failed 2 h ago: source /mnt/card is not mounted\n"))
        #expect(text.contains("Last successful sync 2 days ago (2027-01-13 08:00)"))
    }

    @Test func headlinesForNeverAndSyncing() {
        #expect(StatusReport(lastRun: nil, lastSuccessfulSync: nil).headline(now: testEpoch) == "Never synced")
        var run = successfulRun()
        run.status = .syncing
        run.endedAt = nil
        #expect(StatusReport(lastRun: run, lastSuccessfulSync: nil).headline(now: testEpoch.addingTimeInterval(90))
                == "Syncing · started 1 min ago")
        run.status = .failed(message: "token expired", needsAuth: true)
        #expect(StatusReport(lastRun: run, lastSuccessfulSync: nil).headline(now: testEpoch)
                == "Last sync failed just now: token expired (credentials needed)")
    }

    /// A run holds the library but the catalog's newest run is an older, finished one: the new run is not
    /// recorded yet. The headline says a sync runs, and still tells how the last one went.
    @Test func aRunNotYetRecordedIsSyncing() {
        let report = StatusReport(lastRun: successfulRun(), lastSuccessfulSync: nil, isRunning: true)
        #expect(report.state == "syncing")
        #expect(report.headline(now: testEpoch.addingTimeInterval(600))
                == "Syncing now · before this run: Up to date · last synced 8 min ago · 2 failed")
        #expect(StatusReport(lastRun: successfulRun(), lastSuccessfulSync: nil, isRunning: false).state == "success")
    }

    @Test func aRunThatNeverEndedWhileNothingRunsIsReportedAsFailed() {
        var run = successfulRun()
        run.status = .syncing
        run.endedAt = nil
        let report = StatusReport(lastRun: run, lastSuccessfulSync: nil, isRunning: false)
        #expect(report.lastRun?.status == .failed(message: StatusReport.unfinishedRunMessage, needsAuth: false))
        #expect(report.lastRun?.endedAt == testEpoch.addingTimeInterval(13.4))
        #expect(report.headline(now: testEpoch.addingTimeInterval(600)).hasPrefix("Last sync failed 9 min ago: the run stopped"))
    }

    @Test func jsonFormRoundTrips() throws {
        let report = StatusReport(lastRun: successfulRun(), lastSuccessfulSync: nil)
        let json = report.json(now: testEpoch.addingTimeInterval(300))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "success")
        #expect((object["headline"] as? String)?.hasPrefix("Up to date") == true)
        let decoded = try NarrationJSON.decoder().decode(StatusReport.Document.self, from: Data(json.utf8))
        #expect(decoded.lastRun == successfulRun())
    }

    @Test func aRunStatusKeepsHowTheRunEndedAndReadsSummariesWrittenBeforeIt() throws {
        let stopped = RunStatus.ended(.stoppedAtErrorLimit, message: "3 files failed", needsAuth: false)
        let data = try NarrationJSON.encoder().encode(stopped)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""state":"failed""#) && text.contains(#""outcome":"stoppedAtErrorLimit""#))
        #expect(try NarrationJSON.decoder().decode(RunStatus.self, from: data) == stopped)
        let older = Data(#"{"state":"failed","message":"source folder is gone","needsAuth":true}"#.utf8)
        #expect(try NarrationJSON.decoder().decode(RunStatus.self, from: older)
                == .ended(.failed, message: "source folder is gone", needsAuth: true))
        let olderSuccess = Data(#"{"state":"success"}"#.utf8)
        #expect(try NarrationJSON.decoder().decode(RunStatus.self, from: olderSuccess) == .success)
    }
}

@Suite struct RunLogTests {
    @Test func writesEveryEventAndReadsThemBack() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.subpath("runs"), keep: 5)
        let writer = try store.makeWriter(runID: "run-1")
        let harness = NarratorHarness(extra: [writer])
        NarratorTests().narrateSmallImport(harness)
        try writer.close()
        let events = try store.events(of: "run-1")
        let recorded = harness.recorder.events
        // The log keeps times to the millisecond; everything else comes back as it was.
        func comparable(_ record: NarrationRecord) -> NarrationRecord {
            var record = record
            record.time = testEpoch
            switch record.event {
            case .phaseEnd(let phase, _, let counts): record.event = .phaseEnd(phase, durationSeconds: 0, counts: counts)
            case .runEnd(var end):
                end.durationSeconds = nil
                record.event = .runEnd(end)
            default: break
            }
            return record
        }
        #expect(events.count == recorded.count)
        #expect(events.map(comparable) == recorded.map(comparable))
        for (read, written) in zip(events, recorded) {
            #expect(abs(read.time.timeIntervalSince(written.time)) < 0.002)
        }
        // Replayed, the log tells the run as the live narration did.
        let replayed = try #require(NarrationState.replay(events).summary())
        let expected = try #require(harness.recorder.state.summary())
        #expect(replayed.status == .success)
        #expect(replayed.counts == expected.counts)
        #expect(replayed.failures == expected.failures)
        #expect(replayed.timeline.map(\.phase) == expected.timeline.map(\.phase))
    }

    @Test func aTornLastLineIsSkippedAndABadMiddleLineNamed() throws {
        let good = NarrationJSON.line(for: record(.note("hi", phase: nil), at: 0), encoder: NarrationJSON.encoder())
        let torn = Data((good + good + "{\"event\":\"no").utf8)
        #expect(try RunLogReader.parse(torn).count == 2)
        let corrupt = Data((good + "garbage\n" + good).utf8)
        #expect(throws: RunLogError(path: "x.ndjson", reason: "line 2 is not a narration event")) {
            try RunLogReader.parse(corrupt, path: "x.ndjson")
        }
    }

    @Test func keepsOnlyTheNewestLogs() throws {
        let folder = try TemporaryDirectory()
        let store = RunLogStore(directory: folder.subpath("runs"), keep: 3)
        for index in 1...5 {
            let writer = try store.makeWriter(runID: "2027011\(index)T000000Z-a")
            writer.handle(record(.note("run \(index)", phase: nil), at: Double(index)))
            try writer.close()
            // Same-second mtimes fall back to the id, which sorts by start time.
        }
        let ids = try store.runIDs()
        #expect(ids == ["20270115T000000Z-a", "20270114T000000Z-a", "20270113T000000Z-a"])
    }

    @Test func runIDsSortByStartTime() {
        let early = RunID.make(at: testEpoch, suffix: "a")
        let late = RunID.make(at: testEpoch.addingTimeInterval(1), suffix: "a")
        #expect(early == "20270115T080000Z-a")
        #expect(early < late)
    }
}
