import CairnTesting
@testable import CairnTape
import Testing

/// Random tapes made in random orders: the playlist only grows, holds exactly what the rules say, and the tape is
/// playable exactly when the readiness rule (worked out here on its own) holds.
@Suite("Tape build core, random tapes")
struct TapeBuildPropertyTests {
    enum Input {
        case segment(Double)
        case finish(TapeClipSource)
        case fail(String)
    }

    /// What the test itself knows of a clip as it feeds it (never read from the core).
    struct Model {
        var validWritten: [Int] = []  // milliseconds
        var settled = false
        var failed = false
        var refusedByCore = false
        var published = 0  // expected published segments once settled
        var origin: TapeClipOrigin?
    }

    static func milliseconds(_ seconds: Double) -> Int { Int((seconds * 1000).rounded()) }
    static func isOverLong(_ seconds: Double) -> Bool { milliseconds(seconds) >= 4_500 }

    /// One clip's inputs, in order: segments then an end, or everything at once for a reused clip.
    static func inputs(for clip: Int, _ random: inout SplitMix64) -> [Input] {
        let count = Double.random(in: 0..<1, using: &random) < 0.05 ? 0 : Int.random(in: 1...5, using: &random)
        var durations = (0..<count).map { _ in (Double.random(in: 0.5...2.0, using: &random) * 1000).rounded() / 1000 }
        if count > 0, Double.random(in: 0..<1, using: &random) < 0.06 {
            durations[Int.random(in: 0..<count, using: &random)] = Double.random(in: 4.6...8.0, using: &random)
        }
        let roll = Double.random(in: 0..<1, using: &random)
        if roll < 0.2 {
            return [.finish(.reused(segmentDurations: durations))]
        }
        let origin: TapeClipSource = roll < 0.35 ? .copied : .encoded
        if Double.random(in: 0..<1, using: &random) < 0.15 {
            let before = Int.random(in: 0...count, using: &random)
            return durations.prefix(before).map { .segment($0) } + [.fail("failure of clip \(clip)")]
        }
        return durations.map { .segment($0) } + [.finish(origin)]
    }

    /// Runs one random tape; returns what went wrong (empty when all held) and which situations it went through.
    static func check(seed: UInt64) -> (problems: [String], seen: Set<String>) {
        var random = SplitMix64(seed: seed)
        let clipCount = Int.random(in: 1...30, using: &random)
        let prefixes = (0..<clipCount).map { "../.clips/clip\($0)" }
        var streams = (0..<clipCount).map { inputs(for: $0, &random) }
        var startOrder = Array(0..<clipCount)
        if Double.random(in: 0..<1, using: &random) < 0.3 { startOrder.shuffle(using: &random) }
        let lanes = Int.random(in: 1...3, using: &random)

        var core = TapeBuildCore(clipURIPrefixes: prefixes)
        var models = [Model](repeating: Model(), count: clipCount)
        var problems: [String] = []
        var seen: Set<String> = []
        var text = core.playlistText
        var wasPlayable = false
        var playableEvents = 0
        var finishedEvents = 0
        var publishedEvents: [(clip: Int, index: Int, milliseconds: Int)] = []
        var clipPublishedEvents: [Int] = []
        var skippedEvents: [Int: Bool] = [:]
        var active: [Int] = []
        var nextToStart = 0

        func settle(_ clip: Int, failed: Bool) {
            // The clip publishes what it wrote when every clip before it is settled (it is the frontier).
            let frontier = models[..<clip].allSatisfy(\.settled)
            models[clip].settled = true
            models[clip].failed = failed
            models[clip].published = failed && !frontier ? 0 : models[clip].validWritten.count
        }

        while true {
            while active.count < lanes && nextToStart < clipCount {
                active.append(startOrder[nextToStart])
                nextToStart += 1
            }
            guard !active.isEmpty else { break }
            let slot = Int.random(in: 0..<active.count, using: &random)
            let clip = active[slot]
            let fed = clip
            let input = streams[clip].removeFirst()
            if streams[clip].isEmpty { active.remove(at: slot) }

            let events: [TapeBuildEvent]
            let ignored = models[clip].refusedByCore
            switch input {
            case .segment(let seconds):
                events = core.segmentWritten(clip: clip, durationSeconds: seconds)
                if ignored { break }
                if isOverLong(seconds) {
                    models[clip].refusedByCore = true
                    settle(clip, failed: true)
                } else {
                    models[clip].validWritten.append(milliseconds(seconds))
                }
            case .finish(let source):
                events = core.clipFinished(clip: clip, how: source)
                if ignored { break }
                if case .reused(let durations) = source {
                    if durations.contains(where: isOverLong) {
                        models[clip].refusedByCore = true
                        settle(clip, failed: true)
                        break
                    }
                    models[clip].validWritten = durations.map(milliseconds)
                }
                if models[clip].validWritten.isEmpty {
                    models[clip].refusedByCore = true
                    settle(clip, failed: true)
                } else {
                    models[clip].origin = source.origin
                    settle(clip, failed: false)
                }
            case .fail(let reason):
                events = core.clipFailed(clip: clip, reason: reason)
                if !ignored { settle(clip, failed: true) }
            }
            if ignored {
                seen.insert("news of a refused clip")
                if !events.isEmpty { problems.append("news of a refused clip \(clip) gave \(events)") }
            }

            // The playlist only grows.
            let newText = core.playlistText
            if !newText.utf8.starts(with: text.utf8) { problems.append("the playlist changed instead of growing") }
            text = newText

            // Readiness, worked out here from the model.
            let settledPrefix = models.firstIndex { !$0.settled } ?? clipCount
            let ready = models[..<settledPrefix].filter { $0.settled && !$0.failed }
            let readySeconds = ready.reduce(0) { $0 + $1.validWritten.reduce(0, +) }
            let expectPlayable = settledPrefix == clipCount || (ready.count >= 2 && readySeconds >= 6_000)
            if core.isPlayable != expectPlayable {
                problems.append("playable \(core.isPlayable), expected \(expectPlayable) (\(ready.count) clips, \(readySeconds) ms)")
            }
            if wasPlayable && !core.isPlayable { problems.append("playable turned false") }
            wasPlayable = core.isPlayable
            if core.isFinished != (settledPrefix == clipCount) { problems.append("finished \(core.isFinished) too early or late") }

            for (position, event) in events.enumerated() {
                switch event {
                case .segmentPublished(let clip, let index, let seconds, _):
                    publishedEvents.append((clip, index, milliseconds(seconds)))
                    // Written earlier, beyond the frontier: published when the frontier reached its clip.
                    if clip != fed { seen.insert("held segments published") }
                case .clipPublished(let clip, let how):
                    clipPublishedEvents.append(clip)
                    seen.insert("published \(how)")
                case .clipSkipped(let clip, _, let cutShort):
                    seen.insert(cutShort ? "cut short" : "skipped")
                    if skippedEvents[clip] != nil { problems.append("clip \(clip) skipped twice") }
                    skippedEvents[clip] = cutShort
                case .playable:
                    playableEvents += 1
                    if settledPrefix < clipCount { seen.insert("playable before the end") }
                    if !expectPlayable { problems.append("a playable event before the rule held") }
                case .finished(let summary):
                    finishedEvents += 1
                    if position != events.count - 1 { problems.append("finished is not the last event") }
                    if summary != core.summary { problems.append("the finished summary differs from the core's") }
                }
            }
            if problems.count > 5 { break }
        }

        // Every clip settled, the playlist ended.
        if !core.isFinished || finishedEvents != 1 { problems.append("not finished once: \(finishedEvents)") }
        if !text.hasSuffix("#EXT-X-ENDLIST\n") { problems.append("no ENDLIST at the end") }
        if playableEvents != 1 || !core.isPlayable { problems.append("\(playableEvents) playable events") }

        // Published: the non-failed clips in full, the cut-short ones' published part, in clip order.
        let expected = models.enumerated().flatMap { clip, model in
            model.validWritten.prefix(model.published).enumerated().map { (clip, $0.offset, $0.element) }
        }
        if publishedEvents.map({ "\($0.clip)/\($0.index)/\($0.milliseconds)" }) != expected.map({ "\($0.0)/\($0.1)/\($0.2)" }) {
            problems.append("published segment events differ from the model")
        }
        let listed = TapeBuildPropertyTests.segmentsListed(in: text)
        let expectedListed = expected.map { "\(prefixes[$0.0])/\(TapeClipFiles.segment($0.1)) \(TapePlaylist.seconds(milliseconds: $0.2))" }
        if listed.segments != expectedListed { problems.append("the playlist lists \(listed.segments.count) segments, expected \(expectedListed.count)") }
        let clipsListed = Set(expected.map(\.0)).count
        if listed.maps != clipsListed || listed.discontinuities != max(0, clipsListed - 1) {
            problems.append("\(listed.maps) maps and \(listed.discontinuities) discontinuities for \(clipsListed) clips")
        }
        let finishedClips = models.indices.filter { !models[$0].failed }
        if clipPublishedEvents != finishedClips { problems.append("clips published \(clipPublishedEvents), expected \(finishedClips)") }
        let failedClips = models.indices.filter { models[$0].failed }
        if skippedEvents.keys.sorted() != failedClips { problems.append("clips skipped \(skippedEvents.keys.sorted()), expected \(failedClips)") }
        for clip in failedClips where skippedEvents[clip] != (models[clip].published > 0) {
            problems.append("clip \(clip): cut short \(String(describing: skippedEvents[clip])), published \(models[clip].published)")
        }

        // The summary counts what was fed.
        let summary = core.summary
        let origins = models.compactMap(\.origin)
        if summary.encoded != origins.count(where: { $0 == .encoded }) || summary.reused != origins.count(where: { $0 == .reused })
            || summary.copied != origins.count(where: { $0 == .copied }) || summary.skippedCount != failedClips.count
            || summary.encoded + summary.reused + summary.copied + summary.skippedCount != clipCount {
            problems.append("summary \(summary) does not match what was fed")
        }
        if milliseconds(summary.seconds) != expected.reduce(0, { $0 + $1.2 }) { problems.append("summary seconds \(summary.seconds)") }
        return (problems.map { "seed \(seed): \($0)" }, seen)
    }

    /// The segment lines ("uri duration"), #EXT-X-MAP lines and discontinuities of a playlist, after checking its header.
    static func segmentsListed(in text: String) -> (segments: [String], maps: Int, discontinuities: Int) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var segments: [String] = []
        var maps = 0
        var discontinuities = 0
        var pendingDuration: String?
        for line in lines.dropFirst(6) {
            if line.hasPrefix("#EXTINF:") {
                pendingDuration = String(line.dropFirst(8).dropLast())
            } else if line.hasPrefix("#EXT-X-MAP:") {
                maps += 1
            } else if line == "#EXT-X-DISCONTINUITY" {
                discontinuities += 1
            } else if let duration = pendingDuration, !line.hasPrefix("#") {
                segments.append("\(line) \(duration)")
                pendingDuration = nil
            }
        }
        return (segments, maps, discontinuities)
    }

    @Test func randomTapesKeepEveryRule() {
        var failures: [String] = []
        var seen: Set<String> = []
        for seed in UInt64(1)...600 {
            let result = Self.check(seed: seed)
            failures += result.problems
            seen.formUnion(result.seen)
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        // The cases went through every situation the rules are about, so the checks above were not vacuous.
        #expect(seen == ["news of a refused clip", "held segments published", "published encoded", "published copied",
                         "published reused", "cut short", "skipped", "playable before the end"], "\(seen.sorted())")
    }

    /// The generator itself covers what the rules are about, so the test above is not vacuous.
    @Test func theRandomTapesCoverFailuresAndReuse() {
        var random = SplitMix64(seed: 7)
        var kinds: Set<String> = []
        for clip in 0..<2_000 {
            for input in Self.inputs(for: clip, &random) {
                switch input {
                case .segment(let seconds): kinds.insert(Self.isOverLong(seconds) ? "overLong" : "segment")
                case .finish(.reused): kinds.insert("reused")
                case .finish(let source): kinds.insert("\(source.origin)")
                case .fail: kinds.insert("fail")
                }
            }
        }
        #expect(kinds == ["segment", "overLong", "reused", "encoded", "copied", "fail"])
    }
}
