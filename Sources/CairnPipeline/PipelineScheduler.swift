import CairnCore

/// Runs items through the transfer, metadata, thumbnail and synthesis lanes.
///
/// One actor owns every decision, so its state changes are synchronous and ordered; stage work runs
/// in detached tasks that report back. Every state change is persisted through one `RecordWriter`
/// (in order, batched); a phase's stage work starts only after its in-flight mark is committed.
///
/// Policies:
/// - each lane runs at most `width` items; an item that finished a lane waits, holding its slot,
///   while the next lane's inbox is full;
/// - synthesis starts no clip while thumbnail work is waiting, unless the thumbnail lane is itself
///   stuck on a full synthesis inbox (otherwise the two would wait on each other forever);
/// - a phase that throws a retryable error or times out is retried from that phase only, after
///   `backoff` with jitter, up to `maxAttempts` tries; non-retryable errors fail the item at once;
/// - crash suspects (see `CrashLoopGuard`) run one at a time, after everything else;
/// - `maxErrors` items failed for good, `cancel(deadline:)`, or a store failure stop new work.
///
/// Use (`PipelineImport` does this over the catalog):
/// ```
/// // placeholders for the plan, persisted before any heavy work, plus what earlier runs left unfinished
/// let (records, _) = try catalogStore.unfinished()
/// let scheduler = PipelineScheduler(configuration: try .defaults(cores: 2).applying(laneSpec: spec),
///                                   stages: stages, store: catalogStore, onEvent: narrate)
/// // on SIGINT/SIGTERM: Task { await scheduler.cancel(deadline: .seconds(5)) }
/// let result = try await scheduler.run(records)
/// try result.report.jsonLines().write(to: reportURL)
/// exit(result.exitStatus.rawValue)
/// ```
public actor PipelineScheduler {
    private let configuration: PipelineConfiguration
    private let stages: any PipelineStages
    private let store: any ItemStateStore
    private let clock: any Clock<Duration>
    private var random: any RandomNumberGenerator & Sendable
    private let onEvent: @Sendable (PipelineEvent) -> Void

    private struct Entry {
        var record: ItemRecord
        var route: ItemRoute
        /// Tries of the current phase in this run.
        var attemptsInPhase = 0
    }

    private struct RunningPhase {
        var id: ItemID
        var lane: Lane
        var task: Task<Void, Never>
        /// Timed out: the item has failed, but its blocking work has not returned yet, so it keeps its slot.
        var timedOut = false
    }

    /// Fresh placeholders, in order, handed to the transfer lane only as its inbox has room: the scheduler
    /// holds an entry (and persists the move to `queued`) only for items in play, however big the import.
    private var waiting = FIFO<ItemRecord>()
    /// Items in play. An item that ends leaves for `finished`, which keeps only what the report needs, so
    /// memory per item stays small on imports of many thousands of files.
    private var entries: [ItemID: Entry] = [:]
    private var finished: [ItemID: FileOutcomeEntry] = [:]
    private var order: [ItemID] = []
    private var lanes = [LaneQueue](repeating: LaneQueue(), count: Lane.allCases.count)
    private var running: [UInt64: RunningPhase] = [:]
    private var nextToken: UInt64 = 0
    private var backoffTimers: [ItemID: Task<Void, Never>] = [:]
    private var suspects = FIFO<ItemID>()
    private var activeSuspect: ItemID?
    private var finalFailures = 0
    private var stopReason: StopReason?
    private var deadlineTimer: Task<Void, Never>?
    private var progress: ProgressTracker
    private var statistics = LaneStatistics()
    private var writer: RecordWriter?
    private var runFinished: CheckedContinuation<Void, Never>?
    private var hasRun = false
    /// A `cancel(deadline:)` that came before `run`.
    private var pendingCancelDeadline: Duration?

    /// - Parameters:
    ///   - clock: times phase timeouts, backoff sleeps and the cancellation deadline.
    ///   - random: source of backoff jitter.
    ///   - onEvent: called synchronously on every event; keep it quick.
    public init(configuration: PipelineConfiguration, stages: any PipelineStages, store: any ItemStateStore,
                clock: any Clock<Duration> = DispatchTimerClock(),
                random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
                onEvent: @escaping @Sendable (PipelineEvent) -> Void = { _ in }) {
        self.configuration = configuration
        self.stages = stages
        self.store = store
        self.clock = clock
        self.random = random
        self.onEvent = onEvent
        self.progress = ProgressTracker(weights: configuration.progressWeights)
    }

    /// Runs `records` (placeholders of a new plan and/or unfinished records of an earlier run, as the
    /// store holds them) to the end, or until stopped. Records still marked in flight go through the
    /// crash-loop guard first. Call once per scheduler.
    ///
    /// Throws only when the store fails (`PipelineError.alreadyRan` on a second call); per-file
    /// failures are in the result's report.
    public func run(_ records: consuming [ItemRecord]) async throws -> PipelineRunResult {
        guard !hasRun else { throw PipelineError.alreadyRan }
        hasRun = true
        let writer = RecordWriter(store: store) { [weak self] error in await self?.storeFailed(error) }
        self.writer = writer
        writer.start()

        order.reserveCapacity(records.count)
        // Fresh placeholders wait (compacted in place at the front of the caller's list); the rest are
        // admitted now: resumed items, crash suspects, finished ones for the report.
        var waitingCount = 0
        for index in records.indices {
            let recovered = CrashLoopGuard.recover(records[index])
            let record = recovered ?? records[index]
            guard register(record) else { continue }
            if recovered == nil && record.state == .placeholder {
                records[waitingCount] = record
                waitingCount += 1
            } else {
                admit(record, persisting: recovered != nil)
            }
        }
        records.removeLast(records.count - waitingCount)
        waiting = FIFO(records)
        records = []
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            runFinished = continuation
            if let pendingCancelDeadline { cancel(deadline: pendingCancelDeadline) }
            pump()
            finishIfDone()
        }
        try await writer.finish()
        return result()
    }

    /// Stops taking new work; phases in flight may finish within `deadline`, then are abandoned,
    /// left in their resumable state. The run then returns with `.interrupted`.
    ///
    /// Called before `run`, the run starts stopped (nothing starts, it returns `.interrupted`). Called
    /// again while stopping, with a shorter deadline (`.zero`: a second signal), it abandons at once.
    public func cancel(deadline: Duration) {
        guard hasRun else {
            pendingCancelDeadline = min(pendingCancelDeadline ?? deadline, deadline)
            return
        }
        guard runFinished != nil, stopReason != .storeFailed else { return }
        if stopReason == .interrupted {
            if deadline <= .zero { abandonRunningPhases() }
            return
        }
        stop(.interrupted)
        if deadline <= .zero {
            abandonRunningPhases()
        } else if !running.isEmpty {
            deadlineTimer = Task { [clock] in
                do { try await clock.sleep(for: deadline) } catch { return }
                self.abandonRunningPhases()
            }
        }
        finishIfDone()
    }

    /// Lane occupancy so far.
    public var laneStatistics: LaneStatistics { statistics }

    /// What each lane holds right now, for a live view.
    public var occupancy: [Lane: LaneOccupancy] {
        var result = [Lane: LaneOccupancy]()
        for lane in Lane.allCases {
            let queue = lanes[lane.index]
            let notAdmitted = lane == .transfer ? waiting.count : 0
            result[lane] = LaneOccupancy(waiting: notAdmitted + queue.backlog.count + queue.inbox.count + queue.retryReady.count,
                                         running: queue.inFlight.count, heldByBackPressure: queue.blocked.count)
        }
        return result
    }

    // MARK: Admission

    /// Counts the item in (once: false for an id seen before) for the report's order and the progress.
    private func register(_ record: ItemRecord) -> Bool {
        guard !progress.contains(record.id) else { return false }
        order.append(record.id)
        progress.register(record.item, route: configuration.route(for: record.item), state: record.state,
                          finished: record.state.isTerminal)
        return true
    }

    /// Gives a registered item its entry: into the backlog of the lane it resumes in, among the crash suspects,
    /// or straight to `finished`. `persisting`: crash-loop recovery changed the record.
    private func admit(_ record: ItemRecord, persisting: Bool) {
        let route = configuration.route(for: record.item)
        var entry = Entry(record: record, route: route)
        let id = record.id
        entries[id] = entry
        if persisting { persist(entry) }

        if record.state == .placeholder { move(&entry, to: .queued) }
        if record.state.resumeLane == .synthesis && !route.includesSynthesis {
            // Clips were switched off since this item reached synthesis.
            move(&entry, to: .ready)
        }
        entries[id] = entry
        guard let lane = entry.record.state.resumeLane else {
            end(entry, Self.outcome(ofFinished: entry.record))
            return
        }
        if CrashLoopGuard.isSuspect(entry.record) {
            suspects.append(id)
        } else {
            lanes[lane.index].backlog.append(id)
        }
    }

    // MARK: Dispatch

    /// Starts whatever may start; loops because starting work frees inbox room upstream.
    private func pump() {
        guard stopReason == nil else { return }
        var progressed = true
        while progressed {
            progressed = false
            for lane in Lane.allCases.reversed() {
                if refill(lane) { progressed = true }
                if startWork(in: lane) { progressed = true }
            }
            if startNextSuspectIfIdle() { progressed = true }
        }
    }

    private func refill(_ lane: Lane) -> Bool {
        let capacity = configuration[lane].inboxCapacity
        var moved = false
        if let previous = Lane.allCases.last(where: { $0 < lane }) {
            while lanes[lane.index].inbox.count < capacity, let id = lanes[previous.index].blocked.popFirst() {
                lanes[lane.index].inbox.append(id)
                moved = true
            }
        }
        if lane == .transfer {
            while lanes[lane.index].backlog.count + lanes[lane.index].inbox.count < capacity,
                  let record = waiting.popFirst() {
                admit(record, persisting: false)
            }
        }
        while lanes[lane.index].inbox.count < capacity, let id = lanes[lane.index].backlog.popFirst() {
            lanes[lane.index].inbox.append(id)
            moved = true
        }
        noteInbox(lane)
        return moved
    }

    private func startWork(in lane: Lane) -> Bool {
        var started = false
        while lanes[lane.index].slotsUsed < configuration[lane].width, mayStart(in: lane) {
            let id: ItemID
            if let retry = lanes[lane.index].retryReady.popFirst() {
                id = retry
            } else if let waiting = lanes[lane.index].inbox.popFirst() {
                id = waiting
            } else {
                break
            }
            start(id, in: lane)
            started = true
        }
        return started
    }

    /// Every thumbnail before any clip, except when thumbnails wait on a full synthesis inbox.
    private func mayStart(in lane: Lane) -> Bool {
        guard lane == .synthesis else { return true }
        let thumbnail = lanes[Lane.thumbnail.index]
        return !thumbnail.hasWaitingWork || !thumbnail.blocked.isEmpty
    }

    private func startNextSuspectIfIdle() -> Bool {
        if let suspect = activeSuspect {
            guard finished[suspect] != nil else { return false }
            activeSuspect = nil
        }
        guard waiting.isEmpty, lanes.allSatisfy(\.isIdle), backoffTimers.isEmpty, running.isEmpty,
              let id = suspects.popFirst(), let lane = entries[id]?.record.state.resumeLane else { return false }
        activeSuspect = id
        lanes[lane.index].inbox.append(id)
        return true
    }

    private func start(_ id: ItemID, in lane: Lane) {
        guard var entry = entries[id], let writer else { return }
        if entry.record.state != lane.activeState { move(&entry, to: lane.activeState) }
        entry.record.inFlight = true
        entry.attemptsInPhase += 1
        entries[id] = entry
        let committed = persist(entry)
        lanes[lane.index].inFlight.insert(id)
        statistics.maxInFlight[lane] = max(statistics.maxInFlight[lane, default: 0], lanes[lane.index].inFlight.count)
        onEvent(.phaseStarted(entry.record.item, lane, attempt: entry.attemptsInPhase))

        let token = nextToken
        nextToken += 1
        let item = entry.record.item
        let timeout = configuration[lane].timeout.duration(forBytes: item.byteCount)
        let task = Task.detached { [self, stages, clock] in
            do {
                try await writer.waitCommitted(committed)
            } catch {
                await self.phaseEnded(token, .notStarted)
                return
            }
            let timer = Task {
                do { try await clock.sleep(for: timeout) } catch { return }
                await self.phaseEnded(token, .timedOut(timeout))
            }
            let outcome = await withTaskCancellationHandler {
                await PhaseOutcome.perform(lane, of: item, with: stages)
            } onCancel: {
                timer.cancel()
            }
            timer.cancel()
            await self.phaseEnded(token, outcome)
        }
        running[token] = RunningPhase(id: id, lane: lane, task: task)
    }

    // MARK: Results

    private func phaseEnded(_ token: UInt64, _ outcome: PhaseOutcome) {
        // Work abandoned at the deadline finds no token.
        guard var phase = running[token] else { return }
        if phase.timedOut {
            // The work of a timed-out phase has returned at last: only now is its slot free (its result is late).
            running[token] = nil
            lanes[phase.lane.index].timedOutWork -= 1
            pump()
            finishIfDone()
            return
        }
        if case .timedOut = outcome {
            // A slot is free only when its work has returned: blocking work cannot be stopped, and freeing the
            // slot at once would let hung phases pile up past the lane's width.
            phase.timedOut = true
            running[token] = phase
            lanes[phase.lane.index].timedOutWork += 1
        } else {
            running[token] = nil
        }
        // Cancelling the phase interrupts media work (FFmpeg's interrupt callback and cairn's loops).
        phase.task.cancel()
        lanes[phase.lane.index].inFlight.remove(phase.id)
        switch outcome {
        case .succeeded(let result):
            succeed(phase.id, in: phase.lane, duplicate: result == .alreadyInLibrary)
        case .failed(let reason, let retryable):
            fail(phase.id, in: phase.lane, reason: reason, retryable: retryable)
        case .timedOut(let limit):
            if let item = entries[phase.id]?.record.item { onEvent(.timedOut(item, phase.lane, after: limit)) }
            fail(phase.id, in: phase.lane, reason: "timed out after \(formatted(limit))", retryable: true)
        case .notStarted:
            break
        }
        pump()
        finishIfDone()
    }

    private func succeed(_ id: ItemID, in lane: Lane, duplicate: Bool) {
        guard var entry = entries[id] else { return }
        entry.attemptsInPhase = 0
        entry.record.inFlight = false
        entry.record.crashCount = 0
        let next = duplicate ? nil : lane.next(on: entry.route)
        if duplicate { entry.record.isDuplicate = true }
        move(&entry, to: next?.activeState ?? .ready)
        entries[id] = entry
        guard let next else {
            end(entry, duplicate ? .duplicate : .imported)
            return
        }
        guard stopReason == nil else { return }
        let capacity = configuration[next].inboxCapacity
        if lanes[lane.index].blocked.isEmpty && (lanes[next.index].inbox.count < capacity || id == activeSuspect) {
            lanes[next.index].inbox.append(id)
            noteInbox(next)
        } else {
            lanes[lane.index].blocked.append(id)
            statistics.backPressureWaits[lane, default: 0] += 1
            onEvent(.backPressure(entry.record.item, lane: lane))
        }
    }

    private func fail(_ id: ItemID, in lane: Lane, reason: String, retryable: Bool) {
        guard var entry = entries[id] else { return }
        let attempt = entry.attemptsInPhase
        entry.record.inFlight = false
        move(&entry, to: .failed(ItemFailure(phase: lane, reason: reason, attempts: attempt, retryable: retryable)))
        entries[id] = entry
        if retryable && attempt < configuration.maxAttempts {
            // Stopping: no retry now; the record stays failed-retryable and the next run retries it.
            guard stopReason == nil else { return }
            let delay = configuration.backoff.delay(afterAttempt: attempt, unitRandom: nextUnitRandom())
            onEvent(.retryScheduled(entry.record.item, lane, attempt: attempt + 1, delay: delay, reason: reason))
            backoffTimers[id] = Task { [clock] in
                do { try await clock.sleep(for: delay) } catch { return }
                self.retryDue(id, in: lane)
            }
            return
        }
        progress.update(id, to: entry.record.state, finished: true)
        end(entry, .failed(phase: lane, reason: reason))
        emitProgress()
        finalFailures += 1
        if let limit = configuration.maxErrors, finalFailures >= limit, stopReason == nil {
            stop(.errorLimit)
        }
    }

    private func retryDue(_ id: ItemID, in lane: Lane) {
        guard backoffTimers.removeValue(forKey: id) != nil else { return }
        if stopReason == nil { lanes[lane.index].retryReady.append(id) }
        pump()
        finishIfDone()
    }

    /// Slots taken in `lane` (running, blocked, timed out and not returned); for tests, which read it after
    /// the actor has handled an event.
    func slotsUsed(in lane: Lane) -> Int { lanes[lane.index].slotsUsed }

    // MARK: Stopping

    private func stop(_ reason: StopReason) {
        stopReason = reason
        onEvent(.stopping(reason))
        // Items waiting out a backoff stay failed-retryable in the store: the next run retries them.
        for timer in backoffTimers.values { timer.cancel() }
        backoffTimers = [:]
    }

    private func abandonRunningPhases() {
        for phase in running.values {
            phase.task.cancel()
            if phase.timedOut {
                lanes[phase.lane.index].timedOutWork -= 1
                continue  // already failed and persisted
            }
            lanes[phase.lane.index].inFlight.remove(phase.id)
            guard var entry = entries[phase.id] else { continue }
            // The phase restarts next run; a clean abandonment is not a crash.
            entry.record.inFlight = false
            entries[phase.id] = entry
            persist(entry)
            onEvent(.abandoned(entry.record.item, phase.lane))
        }
        running = [:]
        finishIfDone()
    }

    private func storeFailed(_ error: any Error) {
        guard stopReason != .storeFailed else { return }
        if stopReason == nil { stop(.storeFailed) } else { stopReason = .storeFailed }
        abandonRunningPhases()
    }

    private func finishIfDone() {
        guard let continuation = runFinished else { return }
        let done: Bool
        // Timed-out work that never returns does not hold the run: the worker waits for it, within a limit,
        // before it lets go of the library.
        let working = running.values.contains { !$0.timedOut }
        if stopReason != nil {
            done = !working
        } else {
            done = !working && backoffTimers.isEmpty && suspects.isEmpty && waiting.isEmpty
                && (activeSuspect.map { finished[$0] != nil } ?? true) && lanes.allSatisfy(\.isIdle)
        }
        guard done else { return }
        deadlineTimer?.cancel()
        runFinished = nil
        continuation.resume()
    }

    // MARK: Helpers

    /// Moves an entry's state through the machine, records progress and emits events; persists.
    private func move(_ entry: inout Entry, to next: ItemState) {
        let previous = entry.record.state
        do {
            entry.record.state = try previous.moving(to: next, on: entry.route)
        } catch {
            preconditionFailure("\(entry.record.item.relativePath): \(error)")
        }
        persist(entry)
        let finished = next == .ready || next == .cancelled
        progress.update(entry.record.id, to: next, finished: finished)
        onEvent(.transitioned(entry.record.item, from: previous, to: next))
        emitProgress()
    }

    /// The item is done for this run: only its report line is kept.
    private func end(_ entry: Entry, _ outcome: FileOutcome) {
        let id = entry.record.id
        finished[id] = FileOutcomeEntry(path: entry.record.item.relativePath, checksum: entry.record.item.checksum,
                                        outcome: outcome)
        entries[id] = nil
    }

    @discardableResult
    private func persist(_ entry: Entry) -> UInt64 {
        writer?.enqueue(entry.record) ?? 0
    }

    private func emitProgress() {
        var snapshot = progress.snapshot()
        snapshot.lanes = occupancy
        onEvent(.progress(snapshot))
    }

    private func noteInbox(_ lane: Lane) {
        let count = lanes[lane.index].inbox.count
        if count > statistics.maxInboxOccupancy[lane, default: 0] { statistics.maxInboxOccupancy[lane] = count }
    }

    private func nextUnitRandom() -> Double {
        Double(random.next() >> 11) * 0x1p-53
    }

    private func result() -> PipelineRunResult {
        var entriesOut = [FileOutcomeEntry]()
        entriesOut.reserveCapacity(order.count)
        // Placeholders never admitted (the run stopped first) resume at the transfer next run.
        let notAdmitted = Dictionary(waiting.elements.map { ($0.id, $0.item) }, uniquingKeysWith: { first, _ in first })
        for id in order {
            if let ended = finished[id] {
                entriesOut.append(ended)
            } else if let entry = entries[id] {
                entriesOut.append(FileOutcomeEntry(
                    path: entry.record.item.relativePath, checksum: entry.record.item.checksum,
                    outcome: .unfinished(resumeAt: entry.record.state.resumeLane ?? .transfer)))
            } else if let item = notAdmitted[id] {
                entriesOut.append(FileOutcomeEntry(path: item.relativePath, checksum: item.checksum,
                                                   outcome: .unfinished(resumeAt: .transfer)))
            }
        }
        let report = OutcomeReport(entries: entriesOut)
        let completion: RunCompletion
        switch stopReason {
        case .interrupted, .storeFailed: completion = .interrupted
        case .errorLimit: completion = .stoppedAtErrorLimit
        case nil: completion = report.count(.failed) > 0 ? .finishedWithFailures : .finished
        }
        return PipelineRunResult(completion: completion, report: report, progress: progress.snapshot(),
                                 statistics: statistics)
    }

    private static func outcome(ofFinished record: ItemRecord) -> FileOutcome {
        switch record.state {
        case .failed(let failure): return .failed(phase: failure.phase, reason: failure.reason)
        case .cancelled: return .skipped(reason: "cancelled")
        default: return record.isDuplicate ? .duplicate : .imported
        }
    }
}

public enum PipelineError: Error, CustomStringConvertible {
    case alreadyRan
    public var description: String { "a pipeline scheduler runs once; make a new one for the next run" }
}

/// "15 s", "1.5 s", "250 ms": how timeouts read in failure reasons.
func formatted(_ duration: Duration) -> String {
    let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    if milliseconds < 1000 { return "\(milliseconds) ms" }
    if milliseconds % 1000 == 0 { return "\(milliseconds / 1000) s" }
    let tenths = (milliseconds + 50) / 100
    return "\(tenths / 10).\(tenths % 10) s"
}
