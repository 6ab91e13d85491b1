import CairnCore
import CairnNarration
import CairnTapeBuild
import Foundation

/// A tape build as the person watching it sees it: one redrawn line on a terminal ("playable · 4 of 20 clips ·
/// 0:24"), plain lines for cron and pipes, or only skips and the summary. `--json` is the run's narration
/// (`TapeNews.event`), as its run log keeps it.
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
        if mode == .json { return }
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

    private func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

extension TapeNews {
    /// The news as the run's narration says it (the `tape…` events of NDJSON and the run log).
    var event: TapeEvent {
        switch self {
        case .started(let name, let clips, let toMake, let playlist):
            TapeEvent(stage: .started, tape: name, clips: clips, toMake: toMake, playlist: playlist)
        case .segment(let clip, let index, let duration, let seconds):
            TapeEvent(stage: .segment, clip: clip, segment: index, durationSeconds: duration, tapeSeconds: seconds)
        case .clipReady(let clip, let path, let how, let ready, let clips):
            TapeEvent(stage: .clipReady, clips: clips, clip: clip, path: path, how: how.rawValue, clipsReady: ready)
        case .clipSkipped(let clip, let path, let reason, let cutShort):
            TapeEvent(stage: .clipSkipped, clip: clip, path: path, reason: reason, cutShort: cutShort)
        case .playable(let ready, let clips, let seconds):
            TapeEvent(stage: .playable, clips: clips, tapeSeconds: seconds, clipsReady: ready)
        case .finished(let report):
            TapeEvent(stage: .finished, tape: report.name, clips: report.clips, playlist: report.playlist,
                      movie: report.movie, tapeSeconds: report.seconds, encoded: report.encoded, reused: report.reused,
                      skipped: report.skipped.count)
        }
    }
}
