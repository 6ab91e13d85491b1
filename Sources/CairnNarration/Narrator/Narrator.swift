import CairnCore
import Foundation

/// The one value the worker passes around to say what a run is doing.
///
/// Cheap to copy, safe to call from many tasks at once. It keeps the run's counters and per-phase progress,
/// throttles the chatty calls itself (`hashed`, `imported` and progress go out at most once per
/// `activityInterval` each), and forwards events, in `seq` order, to one `NarrationHandler`.
/// `Narrator.disabled` does nothing at all, for benchmarks and callers that want silence.
///
///     let narrator = Narrator(runID: RunID.make(), handler: MultiplexNarrationHandler([renderer, runLog]))
///     narrator.runStarted(command: "import")
///     narrator.phaseStarted(.preparing)
///     narrator.sourceScanned(filesSeen: 6512, bytesSeen: 9_800_000_000, toHash: 1240, bytesToHash: 3_400_000_000)
///     narrator.phaseEnded(.preparing)
///     narrator.phaseStarted(.hashing)
///     narrator.hashed(file: path, bytes: size)          // hot path: per file, from any task
///     narrator.phaseEnded(.hashing)
///     narrator.runEnded(.success)                         // or runEnded(.failed, message: "…")
public struct Narrator: Sendable {
    public static let defaultActivityInterval: TimeInterval = 0.25

    private let core: NarratorCore?

    public init(
        runID: String = RunID.make(), handler: any NarrationHandler, clock: NarrationClock = .system,
        activityInterval: TimeInterval = Narrator.defaultActivityInterval
    ) {
        core = NarratorCore(runID: runID, handler: handler, clock: clock, activityInterval: activityInterval)
    }

    private init() { core = nil }

    /// Says nothing, costs a branch per call.
    public static let disabled = Narrator()

    public var runID: String { core?.runID ?? "" }

    // MARK: Run and phases

    public func runStarted(command: String) {
        core?.record { state in
            state.startedAt = state.now
            state.emit(.runStart(command: command))
        }
    }

    /// A phase began; it becomes the current one.
    public func phaseStarted(_ phase: SyncPhase, detail: String? = nil) {
        core?.record { state in
            guard state.phaseStarts[phase] == nil else { return }
            state.phaseStarts[phase] = state.now
            if state.trackers[phase].isFinished { state.trackers[phase] = ProgressTracker(phase: phase) }
            state.emit(.phaseStart(phase, detail: detail))
        }
    }

    /// A phase finished: its progress is completed (a last `progress` event says so), then `phaseEnd`.
    public func phaseEnded(_ phase: SyncPhase) {
        core?.record { state in
            guard let started = state.phaseStarts.removeValue(forKey: phase) else { return }
            if state.trackers.wasTouched(phase) {
                state.trackers[phase].finish()
                state.emit(state.progressEvent(for: phase))
            }
            state.emit(.phaseEnd(phase, durationSeconds: max(0, state.now.timeIntervalSince(started)), counts: state.counts))
        }
    }

    /// The run ended: the last event. `message` says why on anything but success; `needsAuth` when credentials
    /// are what is missing.
    public func runEnded(_ outcome: RunOutcome, message: String? = nil, needsAuth: Bool = false) {
        core?.record { state in
            let duration = state.startedAt.map { max(0, state.now.timeIntervalSince($0)) }
            state.emit(.runEnd(NarrationEvent.RunEnd(
                outcome: outcome, message: outcome == .success ? nil : message, durationSeconds: duration,
                counts: state.counts, needsAuth: outcome == .success ? nil : needsAuth)))
        }
    }

    // MARK: Counts and progress

    /// The stat pass is done: what the source holds and what needs hashing. Hashing progress is determinate from here.
    public func sourceScanned(filesSeen: Int, bytesSeen: Int64, toHash: Int, bytesToHash: Int64, skipped: Int = 0) {
        core?.record { state in
            state.counts.filesSeen = filesSeen
            state.counts.bytesSeen = bytesSeen
            state.counts.toHash = toHash
            state.counts.bytesToHash = bytesToHash
            state.counts.skipped = skipped
            state.trackers[.hashing].setTotal(items: toHash, bytes: bytesToHash)
        }
    }

    /// Reconciliation sorted the hashed content: `new` will be imported (the importing total), `duplicates` not.
    public func classified(new: Int, duplicates: Int, newBytes: Int64? = nil) {
        core?.record { state in
            state.counts.new = new
            state.counts.duplicates = duplicates
            state.trackers[.importing].setTotal(items: new, bytes: newBytes)
        }
    }

    /// Sets or corrects the total of any phase's progress.
    public func expectTotal(_ phase: SyncPhase, items: Int, bytes: Int64? = nil) {
        core?.record { state in state.trackers[phase].setTotal(items: items, bytes: bytes) }
    }

    /// One file hashed. The hot path: counts always, emits `hashed` and `progress` at most once per interval.
    public func hashed(file: String, bytes: Int64) {
        core?.record { state in
            state.counts.hashed += 1
            state.counts.bytesHashed += bytes
            state.trackers[.hashing].advance(items: 1, bytes: bytes)
            if state.hashedThrottle.shouldFire(at: state.now) {
                state.emit(.hashed(file: file))
            }
            state.emitProgressIfDue(.hashing)
        }
    }

    /// One item became ready in the library. `imported` activity is throttled like `hashed`.
    public func imported(file: String, bytes: Int64 = 0, sha1: String? = nil) {
        core?.record { state in
            state.counts.ready += 1
            state.trackers[.importing].advance(items: 1, bytes: bytes)
            // Every one: each file's outcome is an event (a failure an `error`, a file kept without preview a
            // `warning`), so a client of the stream can count them against the summary.
            state.emit(.imported(file: file, sha1: sha1))
            state.emitProgressIfDue(.importing)
        }
    }

    /// A derived file (`role`: thumbnail, preview or clip) of the item `sha1` (`file` in its source) is in place.
    public func derived(file: String, sha1: String, role: String) {
        core?.record { state in state.emit(.derived(file: file, sha1: sha1, role: role)) }
    }

    /// A file was kept, byte-identical, without a preview (cairn cannot render its format here). It is ready,
    /// not failed; like a failure it is never throttled, so every such file is in the log with its reason.
    public func keptWithoutPreview(file: String, reason: FailureReason) {
        core?.record { state in
            state.counts.keptWithoutPreview += 1
            state.emit(.warning("kept without preview: \(file): \(reason)", phase: state.currentPhase, file: file))
        }
    }

    /// A file failed, with its reason. Never throttled: every failure is in the log and the summary.
    /// The file still counts as processed for `phase`'s progress (default: the current phase).
    public func failed(file: String, reason: FailureReason, phase: SyncPhase? = nil, bytes: Int64 = 0) {
        core?.record { state in
            state.counts.failed += 1
            let phase = phase ?? state.currentPhase
            if let phase {
                state.trackers[phase].advance(items: 1, bytes: bytes)
            }
            state.emit(.error(reason.description, phase: phase, file: file, category: reason.category))
            if let phase { state.emitProgressIfDue(phase) }
        }
    }

    /// A retryable failure: `file` gets another try in `lane` (a note says so; `counts.retries` counts it).
    public func retryScheduled(file: String, lane: String, attempt: Int, reason: FailureReason) {
        core?.record { state in
            state.counts.retries += 1
            state.emit(.note("\(file): \(lane) try \(attempt) after: \(reason)", phase: state.currentPhase))
        }
    }

    /// Latest lane occupancy; carried by the next `progress` event.
    public func lanes(_ occupancy: [LaneOccupancy]) {
        core?.record { state in state.lanes = occupancy }
    }

    /// The counters so far.
    public var counts: RunCounts { core?.state.withLock { $0.counts } ?? RunCounts() }

    // MARK: Activity

    /// `count` checksums were stamped "confirmed deleted" at the source.
    public func stamped(confirmedDeleted count: Int) {
        core?.record { state in
            state.counts.confirmedDeleted += count
            state.emit(.stamped(confirmedDeleted: count))
        }
    }

    /// The destination was checked against what cairn brought there.
    public func destinationChecked(_ drift: DestinationDrift) {
        core?.record { $0.emit(.destinationChecked(drift)) }
    }

    public func note(_ message: String) { core?.record { $0.emit(.note(message, phase: $0.currentPhase)) } }
    public func warning(_ message: String) {
        core?.record { $0.emit(.warning(message, phase: $0.currentPhase, file: nil)) }
    }
    /// A run-level error (a file's failure goes through `failed(file:reason:)`).
    public func error(_ message: String) { core?.record { $0.emit(.error(message, phase: $0.currentPhase, file: nil)) } }

    /// A tape build's news; a clip on the playlist counts as ready and one left out as failed, so the run's end
    /// says what the build made.
    public func tape(_ news: TapeEvent) {
        core?.record { state in
            switch news.stage {
            case .clipReady: state.counts.ready += 1
            case .clipSkipped: state.counts.failed += 1
            case .started, .segment, .playable, .finished: break
            }
            state.emit(.tape(news))
        }
    }
}

/// Shared, locked state behind every copy of one `Narrator`.
final class NarratorCore: Sendable {
    struct State {
        let runID: String
        let activityInterval: TimeInterval
        /// The time of the call being recorded; every event it emits carries it.
        var now = Date(timeIntervalSince1970: 0)
        var seq = 0
        var startedAt: Date?
        var counts = RunCounts()
        var phaseStarts: [SyncPhase: Date] = [:]
        var trackers = PhaseTable { ProgressTracker(phase: $0) }
        var progressThrottles: PhaseTable<Throttle>
        var hashedThrottle: Throttle
        var lanes: [LaneOccupancy] = []
        /// Stamped events not yet handed to the handler, in `seq` order.
        var outbox: [NarrationRecord] = []

        init(runID: String, activityInterval: TimeInterval) {
            self.runID = runID
            self.activityInterval = activityInterval
            hashedThrottle = Throttle(interval: activityInterval)
            progressThrottles = PhaseTable { _ in Throttle(interval: activityInterval) }
        }

        /// The newest open phase.
        var currentPhase: SyncPhase? {
            var newest: (phase: SyncPhase, started: Date)?
            for (phase, started) in phaseStarts {
                if newest == nil || started >= newest!.started { newest = (phase, started) }
            }
            return newest?.phase
        }

        /// Stamps `event` with the run id, the time of the call and the next `seq`, for the handler.
        mutating func emit(_ event: NarrationEvent) {
            seq += 1
            outbox.append(NarrationRecord(event, seq: seq, time: now, runID: runID))
        }

        mutating func progressEvent(for phase: SyncPhase) -> NarrationEvent {
            .progress(phase, trackers[phase].snapshot(at: now), counts: counts, lanes: lanes.isEmpty ? nil : lanes)
        }

        mutating func emitProgressIfDue(_ phase: SyncPhase) {
            guard progressThrottles[phase].shouldFire(at: now) else { return }
            emit(progressEvent(for: phase))
        }
    }

    let runID: String
    let clock: NarrationClock
    let state: Locked<State>
    private let handler: any NarrationHandler
    /// Held while events are handed to the handler: one at a time, in `seq` order, outside `state`'s lock.
    private let delivery = Locked(())

    init(runID: String, handler: any NarrationHandler, clock: NarrationClock, activityInterval: TimeInterval) {
        self.runID = runID
        self.clock = clock
        self.handler = handler
        state = Locked(State(runID: runID, activityInterval: activityInterval))
    }

    /// Runs `body` under the lock, then hands what it emitted to the handler outside it: a slow handler (a terminal,
    /// the run log) never holds up the calls that only count. The time is read under the lock: read before it, two
    /// threads could record out of order, and a throttled event (`hashed`, `imported`) could fire twice in one
    /// interval. A call that emitted returns once its events are handed over, by itself or by a call before it.
    func record(_ body: (inout State) -> Void) {
        let emitted = state.withLock { state in
            state.now = clock.now()
            let before = state.seq
            body(&state)
            return state.seq != before
        }
        guard emitted else { return }
        delivery.withLock { _ in
            let records = state.withLock { state in
                defer { state.outbox.removeAll(keepingCapacity: true) }
                return state.outbox
            }
            for record in records { handler.handle(record) }
        }
    }
}

/// A value per phase, indexed by a switch rather than hashed (`SyncPhase` hashes its `String` raw value) and
/// modified in place: the hot path touches one slot per call without copying or allocating.
struct PhaseTable<Value> {
    private var slots: [Value]
    /// Phases whose slot was modified at least once.
    private var touched: UInt8 = 0

    init(_ make: (SyncPhase) -> Value) {
        slots = [SyncPhase.idle, .preparing, .hashing, .reconciling, .importing, .finalizing].map(make)
    }

    private static func slot(_ phase: SyncPhase) -> Int {
        switch phase {
        case .idle: return 0
        case .preparing: return 1
        case .hashing: return 2
        case .reconciling: return 3
        case .importing: return 4
        case .finalizing: return 5
        }
    }

    func wasTouched(_ phase: SyncPhase) -> Bool { touched & (1 << Self.slot(phase)) != 0 }

    subscript(phase: SyncPhase) -> Value {
        get { slots[Self.slot(phase)] }
        _modify {
            let index = Self.slot(phase)
            touched |= 1 << index
            yield &slots[index]
        }
    }
}
