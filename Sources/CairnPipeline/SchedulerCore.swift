import CairnCore

/// What the scheduler's shell must do for the core: the core decides, the shell performs, in order.
enum SchedulerAction: Sendable {
    /// Hand the record to the store's writer (in order, batched).
    case persist(ItemRecord)
    /// Tell the narration.
    case emit(PipelineEvent)
    /// Run `lane`'s stage for `item` once the last persisted record is committed; time it out after `timeout`.
    case startPhase(token: UInt64, item: ImportItem, lane: Lane, timeout: Duration)
    /// Cancel the phase's task (its media work is interrupted); its end still reports back with its token.
    case cancelPhase(token: UInt64)
    /// Call `graceEnded` for the timed-out phase after `delay`, unless disarmed first (its work returned).
    case armGrace(token: UInt64, after: Duration)
    case disarmGrace(token: UInt64)
    /// Call `retryDue` after `delay`.
    case scheduleRetry(ItemID, Lane, after: Duration)
    /// Drop every pending retry timer (the run stops; those items stay failed-retryable for the next run).
    case cancelRetries
    /// Call `deadlineReached` after `delay`.
    case armDeadline(Duration)
    case disarmDeadline
    /// The run is over: let `run` return.
    case finish
}

/// The scheduler's every decision, as a value: events in (records to run, a phase's end, a retry due, a
/// cancel, the deadline, a store failure), actions out. It performs no effect and reads no clock, so every
/// input, persisted state and option combination can be driven in a test without tasks or timing.
///
/// Policies:
/// - each lane runs at most `width` items; an item that finished a lane waits, holding its slot,
///   while the next lane's inbox is full; a timed-out phase holds its slot until its work returns, or for
///   as long again as its timeout when the work cannot be interrupted (a decoder with no hook);
/// - synthesis starts no clip while thumbnail work is waiting, unless the thumbnail lane is itself
///   stuck on a full synthesis inbox (otherwise the two would wait on each other forever);
/// - a phase that throws a retryable error or times out is retried from that phase only, after
///   `backoff` with jitter, up to `maxAttempts` tries; non-retryable errors fail the item at once;
/// - crash suspects (see `CrashLoopGuard`) run one at a time, after everything else;
/// - `maxErrors` items failed for good, `cancel(deadline:)`, or a store failure stop new work.
struct SchedulerCore {
    let configuration: PipelineConfiguration
    private var random: any RandomNumberGenerator & Sendable

    private struct Entry {
        var record: ItemRecord
        var route: ItemRoute
        /// Tries of the current phase in this run.
        var attemptsInPhase = 0
    }

    private struct RunningPhase {
        var id: ItemID
        var lane: Lane
        /// Timed out: the item has failed, but its blocking work has not returned yet, so it keeps its slot.
        var timedOut = false
    }

    /// Fresh placeholders, in order, handed to the transfer lane only as its inbox has room: the core holds
    /// an entry (and persists the move to `queued`) only for items in play, however big the import.
    private var waiting = FIFO<ItemRecord>()
    /// Items in play. An item that ends leaves for `finished`, which keeps only what the report needs, so
    /// memory per item stays small on imports of many thousands of files.
    private var entries: [ItemID: Entry] = [:]
    private var finished: [ItemID: FileOutcomeEntry] = [:]
    private var order: [ItemID] = []
    private var lanes = [LaneQueue](repeating: LaneQueue(), count: Lane.allCases.count)
    private var running: [UInt64: RunningPhase] = [:]
    private var nextToken: UInt64 = 0
    private var backoff: Set<ItemID> = []
    private var suspects = FIFO<ItemID>()
    private var activeSuspect: ItemID?
    private var finalFailures = 0
    private(set) var stopReason: StopReason?
    private var progress: ProgressTracker
    private(set) var statistics = LaneStatistics()
    /// `start` has run and `finish` has not been asked for yet.
    private(set) var isRunning = false
    private var actions: [SchedulerAction] = []

    init(configuration: PipelineConfiguration, random: any RandomNumberGenerator & Sendable) {
        self.configuration = configuration
        self.random = random
        self.progress = ProgressTracker(weights: configuration.progressWeights)
    }

    // MARK: Events

    /// Takes `records` (placeholders of a new plan and/or unfinished records of an earlier run): records still
    /// marked in flight go through the crash-loop guard; fresh placeholders wait for room; the rest are admitted.
    mutating func start(_ records: consuming [ItemRecord], cancelledWithin deadline: Duration?) -> [SchedulerAction] {
        isRunning = true
        order.reserveCapacity(records.count)
        // Fresh placeholders wait (compacted in place at the front of the caller's list).
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
        if let deadline { stopForCancel(deadline: deadline) }
        pump()
        finishIfDone()
        return takeActions()
    }

    /// A phase try ended (or timed out: its work may still be running).
    mutating func phaseEnded(_ token: UInt64, _ outcome: PhaseOutcome) -> [SchedulerAction] {
        // Work abandoned at the deadline finds no token.
        guard var phase = running[token] else { return takeActions() }
        if phase.timedOut {
            // The work of a timed-out phase has returned at last: only now is its slot free (its result is late).
            actions.append(.disarmGrace(token: token))
            releaseTimedOut(token, phase)
            return takeActions()
        }
        if case .timedOut(let limit) = outcome {
            // A slot is free only when its work has returned: freeing it at once would let hung phases pile up
            // past the lane's width. Work that cannot be interrupted gets a grace as long as its timeout.
            phase.timedOut = true
            running[token] = phase
            lanes[phase.lane.index].timedOutWork += 1
            actions.append(.armGrace(token: token, after: limit))
        } else {
            running[token] = nil
        }
        // Cancelling the phase interrupts media work (FFmpeg's interrupt callback and cairn's loops).
        actions.append(.cancelPhase(token: token))
        lanes[phase.lane.index].inFlight.remove(phase.id)
        switch outcome {
        case .succeeded(let result):
            succeed(phase.id, in: phase.lane, duplicate: result == .alreadyInLibrary)
        case .failed(let reason, let retryable):
            fail(phase.id, in: phase.lane, reason: reason, retryable: retryable)
        case .timedOut(let limit):
            if let item = entries[phase.id]?.record.item { actions.append(.emit(.timedOut(item, phase.lane, after: limit))) }
            fail(phase.id, in: phase.lane, reason: "timed out after \(formatted(limit))", retryable: true)
        case .notStarted:
            break
        }
        pump()
        finishIfDone()
        return takeActions()
    }

    /// A timed-out phase's grace ran out and its work has still not returned: the slot is given back and the
    /// work is left to finish unseen (the worker waits for it, within a limit, before it lets go of the library).
    mutating func graceEnded(_ token: UInt64) -> [SchedulerAction] {
        guard let phase = running[token], phase.timedOut else { return takeActions() }
        releaseTimedOut(token, phase)
        return takeActions()
    }

    private mutating func releaseTimedOut(_ token: UInt64, _ phase: RunningPhase) {
        running[token] = nil
        lanes[phase.lane.index].timedOutWork -= 1
        pump()
        finishIfDone()
    }

    /// An item's backoff elapsed.
    mutating func retryDue(_ id: ItemID, in lane: Lane) -> [SchedulerAction] {
        guard backoff.remove(id) != nil else { return takeActions() }
        if stopReason == nil { lanes[lane.index].retryReady.append(id) }
        pump()
        finishIfDone()
        return takeActions()
    }

    /// Stops taking new work; phases in flight may finish within `deadline`, then are abandoned. Again while
    /// stopping with `.zero` (a second signal), it abandons at once.
    mutating func cancel(deadline: Duration) -> [SchedulerAction] {
        guard isRunning, stopReason != .storeFailed else { return takeActions() }
        if stopReason == .interrupted {
            if deadline <= .zero { abandonRunningPhases() }
            return takeActions()
        }
        stopForCancel(deadline: deadline)
        finishIfDone()
        return takeActions()
    }

    /// The cancellation deadline passed: what still runs is abandoned, left resumable.
    mutating func deadlineReached() -> [SchedulerAction] {
        abandonRunningPhases()
        return takeActions()
    }

    /// The store's writer failed: nothing more can be recorded.
    mutating func storeFailed() -> [SchedulerAction] {
        guard stopReason != .storeFailed else { return takeActions() }
        if stopReason == nil { stop(.storeFailed) } else { stopReason = .storeFailed }
        abandonRunningPhases()
        return takeActions()
    }

    // MARK: Queries

    /// What each lane holds right now, for a live view.
    var occupancy: [Lane: LaneOccupancy] {
        var result = [Lane: LaneOccupancy]()
        for lane in Lane.allCases {
            let queue = lanes[lane.index]
            let notAdmitted = lane == .transfer ? waiting.count : 0
            result[lane] = LaneOccupancy(waiting: notAdmitted + queue.backlog.count + queue.inbox.count + queue.retryReady.count,
                                         running: queue.inFlight.count, heldByBackPressure: queue.blocked.count)
        }
        return result
    }

    /// Slots taken in `lane`: running, blocked, timed out and not returned.
    func slotsUsed(in lane: Lane) -> Int { lanes[lane.index].slotsUsed }

    /// The run's outcome: every item's line in plan order, how it completed, progress and lane statistics.
    mutating func result() -> PipelineRunResult {
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

    // MARK: Admission

    private mutating func takeActions() -> [SchedulerAction] {
        defer { actions = [] }
        return actions
    }

    /// Counts the item in (once: false for an id seen before) for the report's order and the progress.
    private mutating func register(_ record: ItemRecord) -> Bool {
        guard !progress.contains(record.id) else { return false }
        order.append(record.id)
        progress.register(record.item, route: configuration.route(for: record.item), state: record.state,
                          finished: record.state.isTerminal)
        return true
    }

    /// Gives a registered item its entry: into the backlog of the lane it resumes in, among the crash suspects,
    /// or straight to `finished`. `persisting`: crash-loop recovery changed the record.
    private mutating func admit(_ record: ItemRecord, persisting: Bool) {
        let route = configuration.route(for: record.item)
        var entry = Entry(record: record, route: route)
        let id = record.id
        entries[id] = entry
        if persisting { actions.append(.persist(entry.record)) }

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
        guard route.runsInThisRun(lane) else {
            // Archive only: an item that owes only derivatives keeps its state for a run that makes them.
            progress.update(id, to: entry.record.state, finished: true)
            end(entry, .archived)
            return
        }
        if CrashLoopGuard.isSuspect(entry.record) {
            suspects.append(id)
        } else {
            lanes[lane.index].backlog.append(id)
        }
    }

    // MARK: Dispatch

    private mutating func pump() {
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

    private mutating func refill(_ lane: Lane) -> Bool {
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

    private mutating func startWork(in lane: Lane) -> Bool {
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

    private mutating func startNextSuspectIfIdle() -> Bool {
        if let active = activeSuspect {
            guard finished[active] != nil else { return false }
            activeSuspect = nil
        }
        guard waiting.isEmpty, lanes.allSatisfy(\.isIdle), backoff.isEmpty, running.isEmpty,
              let id = suspects.popFirst(), let lane = entries[id]?.record.state.resumeLane else { return false }
        activeSuspect = id
        lanes[lane.index].inbox.append(id)
        return true
    }

    private mutating func start(_ id: ItemID, in lane: Lane) {
        guard var entry = entries[id] else { return }
        if entry.record.state != lane.activeState { move(&entry, to: lane.activeState) }
        entry.record.inFlight = true
        entry.attemptsInPhase += 1
        entries[id] = entry
        actions.append(.persist(entry.record))
        lanes[lane.index].inFlight.insert(id)
        statistics.maxInFlight[lane] = max(statistics.maxInFlight[lane, default: 0], lanes[lane.index].inFlight.count)
        actions.append(.emit(.phaseStarted(entry.record.item, lane, attempt: entry.attemptsInPhase)))
        let token = nextToken
        nextToken += 1
        let item = entry.record.item
        running[token] = RunningPhase(id: id, lane: lane)
        actions.append(.startPhase(token: token, item: item, lane: lane,
                                   timeout: configuration[lane].timeout.duration(forBytes: item.byteCount)))
    }

    // MARK: Results

    private mutating func succeed(_ id: ItemID, in lane: Lane, duplicate: Bool) {
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
        guard entry.route.runsInThisRun(next) else {
            // Archive only: the original is in place; the item waits, owing `next`, for a run with derivatives.
            progress.update(id, to: entry.record.state, finished: true)
            end(entry, .archived)
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
            actions.append(.emit(.backPressure(entry.record.item, lane: lane)))
        }
    }

    private mutating func fail(_ id: ItemID, in lane: Lane, reason: String, retryable: Bool) {
        guard var entry = entries[id] else { return }
        let attempt = entry.attemptsInPhase
        entry.record.inFlight = false
        move(&entry, to: .failed(ItemFailure(phase: lane, reason: reason, attempts: attempt, retryable: retryable)))
        entries[id] = entry
        if retryable && attempt < configuration.maxAttempts {
            // Stopping: no retry now; the record stays failed-retryable and the next run retries it.
            guard stopReason == nil else { return }
            let delay = configuration.backoff.delay(afterAttempt: attempt, unitRandom: nextUnitRandom())
            actions.append(.emit(.retryScheduled(entry.record.item, lane, attempt: attempt + 1, delay: delay, reason: reason)))
            backoff.insert(id)
            actions.append(.scheduleRetry(id, lane, after: delay))
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

    // MARK: Stopping

    private mutating func stopForCancel(deadline: Duration) {
        stop(.interrupted)
        if deadline <= .zero {
            abandonRunningPhases()
        } else if running.values.contains(where: { !$0.timedOut }) {
            actions.append(.armDeadline(deadline))
        }
    }

    private mutating func stop(_ reason: StopReason) {
        stopReason = reason
        actions.append(.emit(.stopping(reason)))
        // Items waiting out a backoff stay failed-retryable in the store: the next run retries them.
        backoff = []
        actions.append(.cancelRetries)
    }

    private mutating func abandonRunningPhases() {
        for (token, phase) in running {
            actions.append(.cancelPhase(token: token))
            if phase.timedOut {
                actions.append(.disarmGrace(token: token))
                lanes[phase.lane.index].timedOutWork -= 1
                continue  // already failed and persisted
            }
            lanes[phase.lane.index].inFlight.remove(phase.id)
            guard var entry = entries[phase.id] else { continue }
            // The phase restarts next run; a clean abandonment is not a crash.
            entry.record.inFlight = false
            entries[phase.id] = entry
            actions.append(.persist(entry.record))
            actions.append(.emit(.abandoned(entry.record.item, phase.lane)))
        }
        running = [:]
        finishIfDone()
    }

    private mutating func finishIfDone() {
        guard isRunning else { return }
        // Timed-out work that never returns does not hold the run: the worker waits for it, within a limit,
        // before it lets go of the library.
        let working = running.values.contains { !$0.timedOut }
        let done: Bool
        if stopReason != nil {
            done = !working
        } else {
            done = !working && backoff.isEmpty && suspects.isEmpty && waiting.isEmpty
                && (activeSuspect.map { finished[$0] != nil } ?? true) && lanes.allSatisfy(\.isIdle)
        }
        guard done else { return }
        isRunning = false
        actions.append(.disarmDeadline)
        actions.append(.finish)
    }

    // MARK: Helpers

    /// Moves an entry's state through the machine, records progress and emits events; persists.
    private mutating func move(_ entry: inout Entry, to next: ItemState) {
        let previous = entry.record.state
        do {
            entry.record.state = try previous.moving(to: next, on: entry.route)
        } catch {
            preconditionFailure("\(entry.record.item.relativePath): \(error)")
        }
        actions.append(.persist(entry.record))
        let finished = next == .ready || next == .cancelled
        progress.update(entry.record.id, to: next, finished: finished)
        actions.append(.emit(.transitioned(entry.record.item, from: previous, to: next)))
        emitProgress()
    }

    /// The item is done for this run: only its report line is kept.
    private mutating func end(_ entry: Entry, _ outcome: FileOutcome) {
        let id = entry.record.id
        finished[id] = FileOutcomeEntry(path: entry.record.item.relativePath, checksum: entry.record.item.checksum,
                                        outcome: outcome)
        entries[id] = nil
    }

    private mutating func emitProgress() {
        var snapshot = progress.snapshot()
        snapshot.lanes = occupancy
        actions.append(.emit(.progress(snapshot)))
    }

    private mutating func noteInbox(_ lane: Lane) {
        let count = lanes[lane.index].inbox.count
        if count > statistics.maxInboxOccupancy[lane, default: 0] { statistics.maxInboxOccupancy[lane] = count }
    }

    private mutating func nextUnitRandom() -> Double {
        Double(random.next() >> 11) * 0x1p-53
    }

    private static func outcome(ofFinished record: ItemRecord) -> FileOutcome {
        switch record.state {
        case .failed(let failure): return .failed(phase: failure.phase, reason: failure.reason)
        case .cancelled: return .skipped(reason: "cancelled")
        default: return record.isDuplicate ? .duplicate : .imported
        }
    }
}
