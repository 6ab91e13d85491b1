import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnNarration

@Suite struct PlainRendererTests {
    @Test func pipeOutputHasNoEscapeCodesAndOneLinePerPhaseChange() {
        let sink = InMemoryTextSink()
        let harness = NarratorHarness(extra: [PlainRenderer(sink: sink, utcOffset: utc)])
        NarratorTests().narrateSmallImport(harness)
        let text = sink.text
        #expect(!text.containsEscape)
        #expect(text.hasSuffix("\n"))
        let lines = sink.lines.filter { !$0.isEmpty }
        #expect(lines.first == "08:00:00 import started (run run-1)")
        #expect(lines.filter { $0.hasSuffix(" hashing") }.count == 1)
        #expect(lines.contains { $0.contains("hashing done in") })
        #expect(lines.contains("08:00:03 error: /src/IMG_2.JPG: truncated JPEG"))
        #expect(lines.last?.hasPrefix("✓ import finished in") == true)
        #expect(lines.last?.contains("3 ready · 1 failed") == true)
    }

    @Test func progressLinesComeAtMostEveryFewSeconds() {
        let sink = InMemoryTextSink()
        let harness = NarratorHarness(extra: [PlainRenderer(sink: sink, progressInterval: 5, utcOffset: utc)])
        let narrator = harness.narrator
        narrator.runStarted(command: "import")
        narrator.sourceScanned(filesSeen: 400, bytesSeen: 400, toHash: 400, bytesToHash: 400)
        narrator.phaseStarted(.hashing)
        for _ in 0..<400 {  // 20 s of hashing, 20 files a second
            harness.clock.advance(by: 0.05)
            narrator.hashed(file: "/src/x.jpg", bytes: 1)
        }
        let progressLines = sink.lines.filter { $0.contains(" hashing ") && $0.contains("files") }
        #expect(progressLines.count == 4, "\(progressLines)")  // at 0.05 s, 5.05 s, 10.05 s and 15.05 s
        #expect(progressLines.last?.contains("/400 files") == true, "\(progressLines)")
        #expect(progressLines.last?.contains("(7") == true)
    }

    @Test func quietKeepsOnlyErrorsAndTheSummary() {
        let sink = InMemoryTextSink()
        let harness = NarratorHarness(extra: [PlainRenderer(sink: sink, verbosity: .quiet, utcOffset: utc)])
        NarratorTests().narrateSmallImport(harness)
        let lines = sink.lines.filter { !$0.isEmpty }
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix("error: /src/IMG_2.JPG: truncated JPEG") == true)
        #expect(lines.last?.hasPrefix("✓ import finished") == true)
    }
}

@Suite struct JSONLinesRendererTests {
    static let allowedFields: Set<String> = [
        "event", "seq", "time", "runId", "command", "phase", "message", "file", "page", "pageCount", "count",
        "durationSeconds", "progress", "counts", "lanes", "status", "outcome", "needsAuth", "category",
    ]

    @Test func everyLineIsOneJSONObjectWithStableFields() throws {
        let sink = InMemoryTextSink()
        let harness = NarratorHarness(extra: [JSONLinesRenderer(sink: sink)])
        NarratorTests().narrateSmallImport(harness)
        let lines = sink.text.split(separator: "\n").map(String.init)
        #expect(lines.count == harness.recorder.events.count)
        var kinds: [String] = []
        for line in lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys).isSubset(of: Self.allowedFields), "\(object.keys)")
            #expect(object["runId"] as? String == "run-1")
            let time = try #require(object["time"] as? String)
            #expect(Timestamp.parse(time) != nil)
            kinds.append(try #require(object["event"] as? String))
        }
        #expect(kinds.first == "runStart" && kinds.last == "runEnd")
        #expect(Set(kinds).isSubset(of: Set(NarrationEvent.Kind.allCases.map(\.rawValue))))
    }

    @Test func fieldNamesAreTheDocumentedOnes() throws {
        let snapshot = ProgressSnapshot(completed: 1, total: 4, bytesCompleted: 10, bytesTotal: 40,
                                        fraction: 0.25, itemsPerSecond: 2, bytesPerSecond: 20, etaSeconds: 3)
        let progressEvent = NarrationRecord(.progress(.hashing, snapshot, counts: RunCounts(), lanes: nil),
                                            seq: 7, time: testEpoch, runID: "r")
        let line = NarrationJSON.line(for: progressEvent, encoder: NarrationJSON.encoder())
        #expect(line == """
            {"counts":{"bytesHashed":0,"bytesSeen":0,"bytesToHash":0,"confirmedDeleted":0,"duplicates":0,\
            "failed":0,"filesSeen":0,"hashed":0,"keptWithoutPreview":0,"new":0,"ready":0,"retries":0,"skipped":0,"toHash":0},\
            "event":"progress",\
            "phase":"hashing","progress":{"bytesCompleted":10,"bytesPerSecond":20,"bytesTotal":40,"completed":1,\
            "etaSeconds":3,"fraction":0.25,"itemsPerSecond":2,"total":4},"runId":"r","seq":7,\
            "time":"2027-01-15T08:00:00.000Z"}

            """)
        let decoded = try NarrationJSON.decoder().decode(NarrationRecord.self, from: Data(line.utf8))
        #expect(decoded == progressEvent)
    }

    @Test func aFilesErrorCarriesItsCategoryBesideItsMessage() throws {
        let failed = NarrationRecord(.error("write: No space left on device", phase: .importing, file: "a.jpg",
                                            category: .noSpace), seq: 3, time: testEpoch, runID: "r")
        let line = NarrationJSON.line(for: failed, encoder: NarrationJSON.encoder())
        #expect(line.contains(#""category":"no_space""#) && line.contains(#""event":"error""#))
        #expect(try NarrationJSON.decoder().decode(NarrationRecord.self, from: Data(line.utf8)) == failed)
        // A run-level error names no file and no category.
        let runLevel = NarrationRecord(.error("catalog locked", phase: nil, file: nil), seq: 4, time: testEpoch, runID: "r")
        #expect(!NarrationJSON.line(for: runLevel, encoder: NarrationJSON.encoder()).contains("category"))
    }

    @Test func aRunEndSaysHowTheRunEndedAndStillSaysSuccessOrFailed() throws {
        let stopped = NarrationRecord(.runEnd(NarrationEvent.RunEnd(
            outcome: .stoppedAtErrorLimit, message: "3 files failed", counts: RunCounts(), needsAuth: false)),
            seq: 9, time: testEpoch, runID: "r")
        let line = NarrationJSON.line(for: stopped, encoder: NarrationJSON.encoder())
        #expect(line.contains(#""outcome":"stoppedAtErrorLimit""#) && line.contains(#""status":"failed""#))
        #expect(try NarrationJSON.decoder().decode(NarrationRecord.self, from: Data(line.utf8)) == stopped)
        // A run log written before `outcome` existed reads its `status`.
        let older = line.replacingOccurrences(of: #""outcome":"stoppedAtErrorLimit","#, with: "")
        #expect(older != line)
        let decoded = try NarrationJSON.decoder().decode(NarrationRecord.self, from: Data(older.utf8))
        guard case .runEnd(let end) = decoded.event else { Issue.record("not a runEnd: \(older)"); return }
        #expect(end.outcome == .failed && end.message == "3 files failed")
    }
}

@Suite struct OutputModeTests {
    @Test func automaticFollowsTheTerminal() {
        #expect(NarrationOutputMode.automatic.resolved(isTerminal: true, environment: [:]) == .live)
        #expect(NarrationOutputMode.automatic.resolved(isTerminal: false, environment: [:]) == .plain)
        #expect(NarrationOutputMode.automatic.resolved(isTerminal: true, environment: ["TERM": "dumb"]) == .plain)
        #expect(NarrationOutputMode.json.resolved(isTerminal: true, environment: [:]) == .json)
    }

    @Test func noColorTurnsColoursOff() {
        #expect(!Terminal.colorsAllowed(environment: ["NO_COLOR": "1"]))
        #expect(Terminal.colorsAllowed(environment: ["NO_COLOR": ""]))
        #expect(Terminal.colorsAllowed(environment: ["TERM": "xterm-256color"]))
    }

    @Test func formatsNumbersSizesAndDurations() {
        #expect(NarrationFormat.count(6_512) == "6,512")
        #expect(NarrationFormat.count(1_234_567) == "1,234,567")
        #expect(NarrationFormat.bytes(1_234_000_000) == "1.2 GB")
        #expect(NarrationFormat.duration(0.82) == "820 ms")
        #expect(NarrationFormat.duration(12.44) == "12.4 s")
        #expect(NarrationFormat.duration(65) == "1m 05s")
        #expect(NarrationFormat.duration(7_380) == "2h 03m")
        #expect(NarrationFormat.relative(testEpoch, now: testEpoch.addingTimeInterval(4 * 60 + 10)) == "4 min ago")
        #expect(NarrationFormat.relative(testEpoch, now: testEpoch.addingTimeInterval(20)) == "just now")
        #expect(NarrationFormat.relative(testEpoch.addingTimeInterval(3 * 86_400), now: testEpoch) == "in 3 days")
    }

    @Test func aSingleDuplicateIsSingular() {
        var counts = RunCounts()
        counts.filesSeen = 9
        counts.duplicates = 1
        #expect(NarrationFormat.countsLine(counts) == "9 seen · 1 duplicate")
        counts.duplicates = 2
        #expect(NarrationFormat.countsLine(counts) == "9 seen · 2 duplicates")
    }
}
