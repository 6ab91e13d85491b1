import CairnCore
import CairnNarration
import CairnTapeBuild
import Foundation

/// A tape build as the person or program watching it sees it: one redrawn line on a terminal ("playable · 4 of
/// 20 clips · 0:24"), plain lines for cron and pipes, NDJSON events (`tapeStarted`, `tapeSegment`,
/// `tapeClipReady`, `tapeClipSkipped`, `tapePlayable`, `tapeFinished`), or only skips and the summary.
final class TapeView: Sendable {
    private struct Status {
        var clips = 0
        var ready = 0
        var seconds = 0.0
        var playable = false
    }

    private let mode: NarrationOutputMode
    private let status = Locked(Status())

    init(mode: NarrationOutputMode) {
        self.mode = mode.resolved(isTerminal: Terminal.isTerminal(STDOUT_FILENO),
                                  environment: ProcessInfo.processInfo.environment)
    }

    /// "0:24", "1:02:03".
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.down))
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        let tail = String(format: "%02d", rest)
        return hours > 0 ? "\(hours):" + String(format: "%02d", minutes) + ":" + tail : "\(minutes):" + tail
    }

    func show(_ news: TapeNews) {
        if mode == .json { return json(news) }
        let line = status.withLock { status -> String? in
            switch news {
            case .started(let name, let clips, let toMake, let playlist):
                status.clips = clips
                return "tape \(name): \(clips) clips, \(clips - toMake) already made; playlist \(playlist)"
            case .segment(_, _, _, let seconds):
                status.seconds = seconds
                return nil
            case .clipReady(_, let path, let how, let ready, _):
                status.ready = ready
                return mode == .plain ? "clip \(ready) of \(status.clips) \(how.rawValue): \(path)" : nil
            case .clipSkipped(_, let path, let reason, let cutShort):
                return "\(cutShort ? "cut short" : "skipped") \(path): \(reason)"
            case .playable(let ready, let clips, let seconds):
                status.playable = true
                return mode == .plain ? "playable · \(ready) of \(clips) clips · \(Self.clock(seconds))" : nil
            case .finished(let report):
                let skipped = report.skipped.isEmpty ? "" : ", \(report.skipped.count) skipped"
                return "tape \(report.name): \(report.clips) clips (\(report.encoded) made, \(report.reused) reused\(skipped)), "
                    + "\(Self.clock(report.seconds)); \(report.playlist)"
                    + (report.movie.map { "; \($0)" } ?? "; no tape.mp4: \(report.movieError ?? "?")")
            }
        }
        switch mode {
        case .live, .automatic:
            let current = status.withLock { status in
                "\(status.playable ? "playable" : "preparing") · \(status.ready) of \(status.clips) clips · \(Self.clock(status.seconds))"
            }
            if let line { write("\r\u{1B}[2K" + line + "\n") }
            if case .finished = news { return }
            write("\r\u{1B}[2K" + current)
        case .plain:
            if let line { write(line + "\n") }
        case .quiet:
            if case .clipSkipped = news, let line { write(line + "\n") }
            if case .finished = news, let line { write(line + "\n") }
        case .json:
            break
        }
    }

    /// Ends a redrawn line before an error is printed below it.
    func end() {
        if mode == .live || mode == .automatic { write("\n") }
    }

    private func json(_ news: TapeNews) {
        var fields: [String: Any] = ["at": Timestamp.withMilliseconds(Date())]
        switch news {
        case .started(let name, let clips, let toMake, let playlist):
            fields.merge(["event": "tapeStarted", "tape": name, "clips": clips, "toMake": toMake, "playlist": playlist]) { $1 }
        case .segment(let clip, let index, let duration, let seconds):
            fields.merge(["event": "tapeSegment", "clip": clip, "segment": index, "durationSeconds": duration,
                          "tapeSeconds": seconds]) { $1 }
        case .clipReady(let clip, let path, let how, let ready, let clips):
            fields.merge(["event": "tapeClipReady", "clip": clip, "path": path, "how": how.rawValue,
                          "clipsReady": ready, "clips": clips]) { $1 }
        case .clipSkipped(let clip, let path, let reason, let cutShort):
            fields.merge(["event": "tapeClipSkipped", "clip": clip, "path": path, "reason": reason,
                          "cutShort": cutShort]) { $1 }
        case .playable(let ready, let clips, let seconds):
            fields.merge(["event": "tapePlayable", "clipsReady": ready, "clips": clips, "tapeSeconds": seconds]) { $1 }
        case .finished(let report):
            fields.merge(["event": "tapeFinished", "tape": report.name, "clips": report.clips, "encoded": report.encoded,
                          "reused": report.reused, "skipped": report.skipped.count, "tapeSeconds": report.seconds,
                          "playlist": report.playlist, "movie": report.movie ?? NSNull()]) { $1 }
        }
        guard let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
