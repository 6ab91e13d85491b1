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
    private let timeZone: TimeZone
    private let storage: Locked<Storage>

    public init(sink: any TextSink, verbosity: Verbosity = .normal, progressInterval: TimeInterval = 5,
                timeZone: TimeZone = .current) {
        self.sink = sink
        self.verbosity = verbosity
        self.timeZone = timeZone
        storage = Locked(Storage(progressThrottle: Throttle(interval: progressInterval)))
    }

    public func handle(_ event: NarrationEvent) {
        let output: String? = storage.withLock { storage in
            storage.state.apply(event)
            guard let text = line(for: event, storage: &storage) else { return nil }
            if event.kind == .runEnd { return text + "\n" }
            return NarrationFormat.clockTime(event.time, timeZone: timeZone) + " " + text + "\n"
        }
        if let output { sink.write(output) }
    }

    private func line(for event: NarrationEvent, storage: inout Storage) -> String? {
        if event.kind == .runEnd { return NarrationFormat.summaryLine(storage.state) }
        if event.kind == .error { return "error: " + NarrationState.activityDetail(event) }
        guard verbosity == .normal else { return nil }
        let phaseName = event.phase?.displayName.lowercased() ?? ""
        switch event.kind {
        case .runStart: return "\(event.command ?? "run") started (run \(event.runID))"
        case .phaseStart: return phaseName + (event.message.map { ": \($0)" } ?? "")
        case .phaseEnd:
            return "\(phaseName) done in \(NarrationFormat.duration(event.durationSeconds ?? 0))"
        case .progress:
            // The final progress of a phase is said by its phaseEnd line.
            guard let phase = event.phase, let snapshot = event.progress, snapshot.fraction != 1,
                  storage.progressThrottle.shouldFire(at: event.time) else { return nil }
            let percent = snapshot.fraction.map { " (\(NarrationFormat.percent($0)))" } ?? ""
            return "\(phase.displayName.lowercased()) "
                + NarrationFormat.progressDetail(snapshot, unit: NarrationFormat.unit(for: phase)) + percent
        case .warning: return "warning: " + (event.message ?? "")
        case .note, .fetched, .stamped: return NarrationState.activityDetail(event)
        case .hashed, .imported, .error, .runEnd: return nil
        }
    }
}
