import CairnCore
import Foundation
import Testing
@testable import CairnNarration

@Suite struct NarratorTests {
    /// A small import: preparing, hashing 10 files every 0.1 s, importing 4.
    func narrateSmallImport(_ harness: NarratorHarness) {
        let narrator = harness.narrator, clock = harness.clock
        narrator.runStarted(command: "import")
        narrator.phaseStarted(.preparing)
        clock.advance(by: 0.8)
        narrator.sourceScanned(filesSeen: 12, bytesSeen: 12_000, toHash: 10, bytesToHash: 10_000, skipped: 2)
        narrator.phaseEnded(.preparing)
        narrator.phaseStarted(.hashing)
        for index in 0..<10 {
            clock.advance(by: 0.1)
            narrator.hashed(file: "/src/IMG_\(index).JPG", bytes: 1_000)
        }
        narrator.phaseEnded(.hashing)
        narrator.phaseStarted(.reconciling)
        narrator.classified(new: 4, duplicates: 6)
        narrator.phaseEnded(.reconciling)
        narrator.phaseStarted(.importing)
        for index in 0..<4 {
            clock.advance(by: 0.5)
            if index == 2 {
                narrator.failed(file: "/src/IMG_2.JPG", reason: "truncated JPEG")
            } else {
                narrator.imported(file: "/src/IMG_\(index).JPG")
            }
        }
        narrator.phaseEnded(.importing)
        narrator.phaseStarted(.finalizing)
        narrator.phaseEnded(.finalizing)
        narrator.runEnded(.success)
    }

    @Test func phaseEventsComeInOrderWithIncreasingSeq() {
        let harness = NarratorHarness()
        narrateSmallImport(harness)
        let events = harness.recorder.events
        #expect(events.map(\.seq) == Array(1...events.count))
        #expect(events.allSatisfy { $0.runID == "run-1" })
        #expect(events.first?.kind == .runStart)
        #expect(events.last?.kind == .runEnd)
        let phases = events.filter { $0.kind == .phaseStart }.compactMap(\.phase)
        #expect(phases == [.preparing, .hashing, .reconciling, .importing, .finalizing])
        let timeline = harness.recorder.state.timeline.entries.map(\.phase)
        #expect(timeline == phases)
        // Every phaseEnd follows its phaseStart.
        for phase in SyncPhase.allCases where phase != .idle {
            let start = events.firstIndex { $0.kind == .phaseStart && $0.phase == phase }
            let end = events.firstIndex { $0.kind == .phaseEnd && $0.phase == phase }
            #expect(start != nil && end != nil && start! < end!, "\(phase)")
        }
    }

    @Test func hashedEventsAreAtLeastAQuarterSecondApart() {
        let harness = NarratorHarness()
        narrateSmallImport(harness)
        let hashed = harness.recorder.events(of: .hashed)
        #expect(hashed.count == 4)  // at 0.1, 0.4, 0.7, 1.0 s into hashing
        for (earlier, later) in zip(hashed, hashed.dropFirst()) {
            #expect(later.time.timeIntervalSince(earlier.time) >= 0.25)
        }
        #expect(harness.recorder.state.counts.hashed == 10)
    }

    @Test func threeRapidHashesProduceOneActivity() {
        let harness = NarratorHarness()
        harness.narrator.phaseStarted(.hashing)
        for _ in 0..<3 {
            harness.narrator.hashed(file: "/src/a.jpg", bytes: 1)
            harness.clock.advance(by: 0.05)
        }
        #expect(harness.recorder.events(of: .hashed).count == 1)
        #expect(harness.narrator.counts.hashed == 3)
    }

    @Test func progressNeverDecreasesWithinAPhaseAndEndsAtOne() {
        let harness = NarratorHarness()
        narrateSmallImport(harness)
        let progress = harness.recorder.events(of: .progress)
        #expect(!progress.isEmpty)
        for phase in [SyncPhase.hashing, .importing] {
            let fractions = progress.filter { $0.phase == phase }.compactMap { $0.snapshot?.fraction }
            #expect(fractions.count >= 2, "\(phase)")
            #expect(fractions == fractions.sorted(), "\(phase)")
            #expect(fractions.allSatisfy { $0 >= 0 && $0 <= 1 })
            #expect(fractions.last == 1)
        }
        // Hashing progress was determinate from its first event: the stat pass came first.
        #expect(progress.first { $0.phase == .hashing }?.snapshot?.total == 10)
    }

    @Test func summaryHasCountsAndFailures() throws {
        let harness = NarratorHarness()
        narrateSmallImport(harness)
        let summary = try #require(harness.recorder.state.summary())
        #expect(summary.status == .success)
        #expect(summary.command == "import")
        let counts = summary.counts
        #expect((counts.filesSeen, counts.toHash, counts.hashed, counts.new, counts.duplicates) == (12, 10, 10, 4, 6))
        #expect((counts.ready, counts.failed, counts.skipped, counts.bytesHashed) == (3, 1, 2, 10_000))
        #expect(summary.failures == [FileFailure(path: "/src/IMG_2.JPG", reason: "truncated JPEG")])
        #expect(abs((summary.timeline.first?.durationSeconds ?? 0) - 0.8) < 0.001)
    }

    /// Handlers run outside the narrator's lock: one that asks the narrator for its counts while handling an event
    /// (as a live view may) neither deadlocks nor sees counts older than the event.
    @Test func aHandlerMayAskTheNarratorItListensTo() {
        final class CountsReader: NarrationHandler {
            let narrator = Locked<Narrator?>(nil)
            let hashedAtPhaseEnd = Locked<[Int]>([])
            func handle(_ record: NarrationRecord) {
                guard record.kind == .phaseEnd, let narrator = narrator.withLock({ $0 }) else { return }
                let hashed = narrator.counts.hashed
                hashedAtPhaseEnd.withLock { $0.append(hashed) }
            }
        }
        let reader = CountsReader()
        let harness = NarratorHarness(extra: [reader])
        reader.narrator.withLock { $0 = harness.narrator }
        harness.narrator.phaseStarted(.hashing)
        for index in 0..<3 { harness.narrator.hashed(file: "\(index).jpg", bytes: 10) }
        harness.narrator.phaseEnded(.hashing)
        #expect(reader.hashedAtPhaseEnd.withLock { $0 } == [3])
    }

    @Test func aFailedRunSaysWhy() throws {
        let harness = NarratorHarness()
        harness.narrator.runStarted(command: "sync")
        harness.narrator.phaseStarted(.preparing)
        harness.clock.advance(by: 2)
        harness.narrator.runEnded(.failed, message: "source /mnt/card is not mounted", needsAuth: false)
        let end = try #require(harness.recorder.events.last)
        #expect(end.end?.outcome == .failed && end.end?.durationSeconds == 2)
        #expect(harness.recorder.state.status == .failed(message: "source /mnt/card is not mounted", needsAuth: false))
    }

    @Test func disabledNarratorSaysNothing() {
        let narrator = Narrator.disabled
        narrator.runStarted(command: "import")
        narrator.hashed(file: "/a", bytes: 1)
        #expect(narrator.counts == RunCounts())
        #expect(narrator.runID == "")
    }

    @Test func countsAreExactUnderConcurrentCalls() async {
        let harness = NarratorHarness()
        let narrator = harness.narrator
        narrator.phaseStarted(.hashing)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<500 { narrator.hashed(file: "/src/\(task)/\(index)", bytes: 2) }
                }
            }
        }
        #expect(narrator.counts.hashed == 4_000)
        #expect(narrator.counts.bytesHashed == 8_000)
        let seqs = harness.recorder.events.map(\.seq)
        #expect(seqs == Array(1...seqs.count))
    }

    @Test func aPhaseThatRunsAgainStartsItsProgressAfresh() {
        let harness = NarratorHarness()
        let narrator = harness.narrator
        narrator.expectTotal(.importing, items: 2)
        narrator.phaseStarted(.importing)
        narrator.phaseEnded(.importing)
        #expect(harness.recorder.state.progress[.importing]?.fraction == 1)
        narrator.phaseStarted(.importing)
        narrator.expectTotal(.importing, items: 4)
        narrator.imported(file: "/src/a.jpg")
        #expect(harness.recorder.events.last?.snapshot?.fraction == 0.25)
    }

    @Test func lanesRideOnProgressEvents() {
        let harness = NarratorHarness()
        harness.narrator.phaseStarted(.importing)
        harness.narrator.classified(new: 2, duplicates: 0)
        harness.narrator.lanes([LaneOccupancy(name: "transfer", busy: 2, width: 4, queued: 7)])
        harness.narrator.imported(file: "/src/a.jpg")
        #expect(harness.recorder.state.lanes == [LaneOccupancy(name: "transfer", busy: 2, width: 4, queued: 7)])
        #expect(harness.recorder.state.progress[.importing]?.fraction == 0.5)
    }

    @Test func everyFileReadyIsAnEventAndEachFileMadeForItToo() throws {
        let harness = NarratorHarness()
        harness.narrator.phaseStarted(.importing)
        // A thousand in the same instant: none sampled away.
        for index in 0..<1000 { harness.narrator.imported(file: "/src/\(index).jpg", sha1: String(repeating: "a", count: 40)) }
        harness.narrator.derived(file: "/src/IMG_1.HEIC", sha1: String(repeating: "b", count: 40), role: "thumbnail")
        let events = harness.recorder.events
        #expect(events.filter { $0.kind == .imported }.count == 1000)
        let derived = try #require(events.last)
        #expect(derived.event == .derived(file: "/src/IMG_1.HEIC", sha1: String(repeating: "b", count: 40), role: "thumbnail"))
        #expect(derived.phase == .importing && derived.event.file == "/src/IMG_1.HEIC")
        // Through NDJSON and back, as the run log and the stream carry it.
        let line = try JSONEncoder().encode(derived)
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect(object["event"] as? String == "derived" && object["role"] as? String == "thumbnail")
        #expect(try JSONDecoder().decode(NarrationRecord.self, from: line).event == derived.event)
        // Not activity a person follows: the feed keeps the files' lines.
        #expect(!harness.recorder.state.activity.newestFirst.contains { $0.kind == .derived })
    }

    @Test func aTapeBuildsNewsIsItsRunsEventsAndItsEndCountsItsClips() throws {
        let harness = NarratorHarness()
        harness.narrator.runStarted(command: "tape build")
        let news = [
            TapeEvent(stage: .started, tape: "trip", clips: 3, toMake: 2, playlist: "/lib/tapes/trip/playlist.m3u8"),
            TapeEvent(stage: .segment, clip: 0, segment: 0, durationSeconds: 2, tapeSeconds: 2),
            TapeEvent(stage: .clipReady, clips: 3, clip: 0, path: "/lib/a.jpg", how: "encoded", clipsReady: 1),
            TapeEvent(stage: .clipSkipped, clip: 1, path: "/lib/b.mp4", reason: "cannot decode", cutShort: false),
            TapeEvent(stage: .playable, clips: 3, tapeSeconds: 6, clipsReady: 2),
            TapeEvent(stage: .clipReady, clips: 3, clip: 2, path: "/lib/c.mp4", how: "reused", clipsReady: 2),
            TapeEvent(stage: .finished, tape: "trip", clips: 3, playlist: "/lib/tapes/trip/playlist.m3u8",
                      movie: "/lib/tapes/trip/tape.mp4", tapeSeconds: 8, encoded: 1, reused: 1, skipped: 1),
        ]
        for event in news { harness.narrator.tape(event) }
        harness.narrator.runEnded(.someFailed, message: "1 clip left out")
        let records = harness.recorder.events
        #expect(records.map(\.kind.rawValue) == ["runStart", "tapeStarted", "tapeSegment", "tapeClipReady", "tapeClipSkipped",
                                                 "tapePlayable", "tapeClipReady", "tapeFinished", "runEnd"])
        // Each through NDJSON and back, its fields beside the record's.
        for record in records {
            let line = NarrationJSON.line(for: record, encoder: NarrationJSON.encoder())
            #expect(try NarrationJSON.decoder().decode(NarrationRecord.self, from: Data(line.utf8)) == record, "\(line)")
        }
        let skipped = try #require(records.first { $0.kind == .tapeClipSkipped })
        let object = try #require(try JSONSerialization.jsonObject(
            with: Data(NarrationJSON.line(for: skipped, encoder: NarrationJSON.encoder()).utf8)) as? [String: Any])
        #expect(object["path"] as? String == "/lib/b.mp4" && object["reason"] as? String == "cannot decode" && object["stage"] == nil)
        // The end counts clips ready and left out; the clip left out is the run's failure; segments are not activity.
        guard case .runEnd(let end) = records.last?.event else { Issue.record("no runEnd"); return }
        #expect(end.counts.ready == 2 && end.counts.failed == 1)
        #expect(harness.recorder.state.failures.map(\.path) == ["/lib/b.mp4"])
        #expect(!harness.recorder.state.activity.newestFirst.contains { $0.kind == .tapeSegment })
    }
}
