import CairnCore
import Foundation

/// Lines for cron and pipes: one per phase change, a progress line at most every `progressInterval`
/// (judged by event times), warnings and errors always, a summary at the end. No escape codes.
/// `quiet` keeps only errors and the summary.
public final class PlainRenderer: NarrationHandler {
    public enum Verbosity: Sendable { case normal, quiet }

    private struct Storage {
        var state = NarrationState()
        var progressThrottle: Throttle
    }

    private let sink: any TextSink
    private let verbosity: Verbosity
    private let utcOffset: UTCOffset
    private let storage: Locked<Storage>

    public init(sink: any TextSink, verbosity: Verbosity = .normal, progressInterval: TimeInterval = 5,
                utcOffset: UTCOffset = .local) {
        self.sink = sink
        self.verbosity = verbosity
        self.utcOffset = utcOffset
        storage = Locked(Storage(progressThrottle: Throttle(interval: progressInterval)))
    }

    public func handle(_ record: NarrationRecord) {
        let output: String? = storage.withLock { storage in
            storage.state.apply(record)
            guard let text = line(for: record, storage: &storage) else { return nil }
            if record.kind == .runEnd { return text + "\n" }
            return NarrationFormat.clockTime(record.time, utcOffset: utcOffset) + " " + text + "\n"
        }
        if let output { sink.write(output) }
    }

    private func line(for record: NarrationRecord, storage: inout Storage) -> String? {
        switch record.event {
        case .runEnd: return NarrationFormat.summaryLine(storage.state)
        case .error: return "error: " + NarrationState.activityDetail(record.event)
        default: break
        }
        guard verbosity == .normal else { return nil }
        switch record.event {
        case .runStart(let command): return "\(command) started (run \(record.runID))"
        case .phaseStart(let phase, let detail): return phase.displayName.lowercased() + (detail.map { ": \($0)" } ?? "")
        case .phaseEnd(let phase, let duration, _):
            return "\(phase.displayName.lowercased()) done in \(NarrationFormat.duration(duration))"
        case .progress(let phase, let snapshot, _, _):
            // The final progress of a phase is said by its phaseEnd line.
            guard snapshot.fraction != 1, storage.progressThrottle.shouldFire(at: record.time) else { return nil }
            let percent = snapshot.fraction.map { " (\(NarrationFormat.percent($0)))" } ?? ""
            return "\(phase.displayName.lowercased()) "
                + NarrationFormat.progressDetail(snapshot, unit: NarrationFormat.unit(for: phase)) + percent
        case .warning(let message, _, _): return "warning: " + message
        case .note, .stamped, .destinationChecked: return NarrationState.activityDetail(record.event)
        case .tape(let news): return news.stage == .segment ? nil : "tape: " + NarrationState.tapeDetail(news)
        case .hashed, .imported, .derived, .error, .runEnd: return nil
        }
    }
}
