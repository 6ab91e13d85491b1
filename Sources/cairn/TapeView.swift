import CairnCore
import CairnNarration
import CairnTapeBuild
import Foundation

/// A tape build as the person watching it sees it: one redrawn line on a terminal ("playable · 4 of 20 clips ·
/// 0:24"), plain lines for cron and pipes, or only skips and the summary. `--json` is the run's narration (its
/// `TapeEvent`s among the run's events), as its run log keeps it.
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

    func show(_ news: TapeEvent) {
        if mode == .json { return }
        let line = status.withLock { status -> String? in
            switch news.stage {
            case .started:
                status.clips = news.clips ?? 0
                return "tape \(news.tape ?? ""): \(status.clips) clips, \(status.clips - (news.toMake ?? 0)) already made; "
                    + "playlist \(news.playlist ?? "")"
            case .segment:
                status.seconds = news.tapeSeconds ?? status.seconds
                return nil
            case .clipReady:
                status.ready = news.clipsReady ?? status.ready
                return mode == .plain ? "clip \(status.ready) of \(status.clips) \(news.how ?? ""): \(news.path ?? "")" : nil
            case .clipSkipped:
                return "\(news.cutShort == true ? "cut short" : "skipped") \(news.path ?? ""): \(news.reason ?? "")"
            case .playable:
                status.playable = true
                return mode == .plain
                    ? "playable · \(news.clipsReady ?? 0) of \(news.clips ?? 0) clips · \(Self.clock(news.tapeSeconds ?? 0))" : nil
            case .finished:
                let skipped = (news.skipped ?? 0) == 0 ? "" : ", \(news.skipped ?? 0) skipped"
                return "tape \(news.tape ?? ""): \(news.clips ?? 0) clips (\(news.encoded ?? 0) made, \(news.reused ?? 0) reused\(skipped)), "
                    + "\(Self.clock(news.tapeSeconds ?? 0)); \(news.playlist ?? "")"
                    + (news.movie.map { "; \($0)" } ?? "; no tape.mp4: \(news.movieError ?? "?")")
            }
        }
        switch mode {
        case .live, .automatic:
            let current = status.withLock { status in
                "\(status.playable ? "playable" : "preparing") · \(status.ready) of \(status.clips) clips · \(Self.clock(status.seconds))"
            }
            if let line { write("\r\u{1B}[2K" + line + "\n") }
            if news.stage == .finished { return }
            write("\r\u{1B}[2K" + current)
        case .plain:
            if let line { write(line + "\n") }
        case .quiet:
            if news.stage == .clipSkipped || news.stage == .finished, let line { write(line + "\n") }
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
