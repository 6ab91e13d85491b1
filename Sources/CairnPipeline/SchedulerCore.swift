import CairnCore
import DequeModule

/// What the scheduler's shell must do for the core: the core decides, the shell performs, in order.
enum SchedulerAction: Sendable {
    /// Hand the record to the store's writer (in order, batched).
    case persist(ItemRecord)
    /// Tell the narration.
    case emit(PipelineEvent)
    /// Run `lane`'s stage for `item` once the last persisted record is committed; time it out after `timeout`.
    /// `alone`: a crash suspect's phase, which waits until every record before its mark is saved by a full save.
    case startPhase(token: UInt64, item: ImportItem, lane: Lane, timeout: Duration, alone: Bool)
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
    /// Ask the run's page source for its next page of planned records, handing it what became of the items that
    /// ended since the last ask (the core keeps no line of them any more).
    case requestPage(ended: [FileOutcomeEntry])
    /// The run is over: let `run` return.
    case finish
}

/// The scheduler's every decision, as a value: events in (records to run, a page of them, a phase's end, a retry
/// due, a cancel, the deadline, a store failure), actions out. It performs no effect and reads no clock, so every
/// input, persisted state and option combination can be driven in a test without tasks or timing.
///
/// Policies:
/// - each lane runs at most `width` items; an item that finished a lane waits, holding its slot,
///   while the next lane's inbox is full; a timed-out phase holds its slot until its work returns, or for
///   as long again as its timeout when the work cannot be interrupted (a decoder with no hook);
/// - with a memory budget (`PipelineConfiguration.memory`), a phase starts only while the estimates of the phases
///   started, its own added, stay within it (`MemoryFootprint`, from the item's probe); one estimated above the
///   budget starts once nothing else holds memory (it runs alone, never starved: while it waits, no other lane starts
///   a phase that holds memory); one estimated above the kernel's limit fails with a `.memory` reason;
/// - synthesis starts no clip while thumbnail work is waiting, unless the thumbnail lane is itself
///   stuck on a full synthesis inbox (otherwise the two would wait on each other forever);
/// - a phase that throws a retryable error or times out is retried from that phase only, after
///   `backoff` with jitter, up to `maxAttempts` tries; non-retryable errors fail the item at once;
/// - crash suspects (see `CrashLoopGuard`) run one at a time, after everything else;
/// - `maxErrors` items failed for good, `cancel(deadline:)`, or a store failure stop new work;
/// - a run fed by pages asks for the next one while the items in play fall below `refillBelow`, so one page's
///   slow tail (clips) never holds back the next page's transfers; the lines of ended items go out with the ask.
///
/// Its fields are internal only so that its rules can live in a second file (SchedulerCore+Dispatch.swift): only
/// the core itself changes them; the actor reads `stopReason`, `statistics` and `isRunning`.
struct SchedulerCore {
    let configuration: PipelineConfiguration
    var random: any RandomNumberGenerator & Sendable

    struct Entry {
        var record: ItemRecord
        var route: ItemRoute
        /// Tries of the current phase in this run.
        var attemptsInPhase = 0
        /// What its decode and encode hold, from its probe in this run (nil: not probed in this run).
        var footprint: MemoryFootprint?
    }

    struct RunningPhase {
        var id: ItemID
        var lane: Lane
        /// Timed out: the item has failed, but its blocking work has not returned yet, so it keeps its slot.
        var timedOut = false
        /// Of the memory budget, what the phase was admitted with; given back when its work returns.
        var memory: Int64 = 0
    }

    /// Fresh placeholders, in order, handed to the transfer lane only as its inbox has room: the core holds
    /// an entry (and persists the move to `queued`) only for items in play, however big the import.
    var waiting = Deque<ItemRecord>()
    /// Items in play. An item that ends leaves for `finished`, which keeps only what the report needs, so
    /// memory per item stays small on imports of many thousands of files.
    var entries: [ItemID: Entry] = [:]
    var finished: [ItemID: FileOutcomeEntry] = [:]
    var order: [ItemID] = []
    var lanes = [LaneQueue](repeating: LaneQueue(), count: Lane.allCases.count)
    var running: [UInt64: RunningPhase] = [:]
    var nextToken: UInt64 = 0
    var backoff: Set<ItemID> = []
    var suspects = Deque<ItemID>()
    var activeSuspect: ItemID?
    /// The memory the started phases were admitted with (`PipelineConfiguration.memory`).
    var memoryInUse: Int64 = 0
    /// The lane whose next phase waits for memory: the other lanes start no phase that holds any until it has.
    var memoryWaiter: Lane?
    var finalFailures = 0
    var stopReason: StopReason?
    var progress: PipelineProgressTracker
    var statistics = LaneStatistics()
    /// `start` has run and `finish` has not been asked for yet.
    var isRunning = false
    /// How the worker that left records in flight died, for every page's crash-loop recovery.
    var death = CrashLoopGuard.Death.killed
    /// A page source has more pages to give; one ask at a time (`pageRequested`).
    var moreToCome = false
    var pageRequested = false
    /// Items in play (admitted or waiting) below which the next page is asked for.
    var refillBelow = 0
    var actions: [SchedulerAction] = []

    init(configuration: PipelineConfiguration, random: any RandomNumberGenerator & Sendable) {
        self.configuration = configuration
        self.random = random
        self.progress = PipelineProgressTracker(weights: configuration.progressWeights)
    }

    // MARK: Events

    /// Takes `records` (placeholders of a new plan and/or unfinished records of an earlier run): records still
    /// marked in flight go through the crash-loop guard (`death`: how the worker that left them died); fresh
    /// placeholders wait for room; the rest are admitted. `moreToCome`: a page source follows, asked for its next
    /// page (`requestPage`) while fewer than `refillBelow` items are in play; the run ends only after its last.
    mutating func start(_ records: consuming [ItemRecord], after death: CrashLoopGuard.Death = .killed,
                        cancelledWithin deadline: Duration?, moreToCome: Bool = false,
                        refillBelow: Int = 0) -> [SchedulerAction] {
        isRunning = true
        self.death = death
        self.moreToCome = moreToCome
        self.refillBelow = max(1, refillBelow)
        if !moreToCome {
            // Every item ends up there: sized once, not doubled (and copied) as it fills.
            order.reserveCapacity(records.count)
            finished.reserveCapacity(records.count)
            progress.reserveCapacity(records.count)
        }
        take(records)
        if let deadline { stopForCancel(deadline: deadline) }
        pump()
        finishIfDone()
        return takeActions()
    }

    /// The page source's answer: its next page, or nil when it has no more.
    mutating func pageArrived(_ records: consuming [ItemRecord]?) -> [SchedulerAction] {
        pageRequested = false
        if let records {
            if stopReason == nil {
                take(records)
            } else {
                // Planned, never admitted: each resumes where it stands next run.
                for record in records where register(record) { waiting.append(record) }
            }
        } else {
            moreToCome = false
        }
        pump()
        finishIfDone()
        return takeActions()
    }

    /// Registers `records`: fresh placeholders wait (compacted in place at the front of the caller's list), the
    /// rest are admitted.
    private mutating func take(_ records: consuming [ItemRecord]) {
        var waitingCount = 0
        for index in records.indices {
            let recovered = CrashLoopGuard.recover(records[index], after: death)
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
        if waiting.isEmpty {
            waiting = Deque(records)
        } else {
            for record in records { waiting.append(record) }
        }
        records = []
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
            memoryInUse -= phase.memory
        }
        // Cancelling the phase interrupts media work (FFmpeg's interrupt callback and cairn's loops).
        actions.append(.cancelPhase(token: token))
        lanes[phase.lane.index].inFlight.remove(phase.id)
        switch outcome {
        case .succeeded(let result, let footprint):
            if let footprint { entries[phase.id]?.footprint = footprint }
            succeed(phase.id, in: phase.lane, duplicate: result == .alreadyInLibrary)
        case .failed(let reason, let retryable):
            fail(phase.id, in: phase.lane, reason: reason, retryable: retryable)
        case .timedOut(let limit):
            if let item = entries[phase.id]?.record.item { actions.append(.emit(.timedOut(item, phase.lane, after: limit))) }
            fail(phase.id, in: phase.lane, reason: FailureReason("timed out after \(formatted(limit))", category: .timeout), retryable: true)
        case .notStarted:
            break
        case .leftToOthers:
            leaveToOthers(phase.id)
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

    mutating func releaseTimedOut(_ token: UInt64, _ phase: RunningPhase) {
        running[token] = nil
        memoryInUse -= phase.memory
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
            // Phases started ahead of the runners count as queued: busy is the work running, up to the width.
            let started = queue.inFlight.count, width = configuration[lane].width
            let waiting = notAdmitted + queue.backlog.count + queue.inbox.count + queue.retryReady.count
            // Made on every transition, kept by the narration only when it emits: no sort here (the page sorts).
            let holding = queue.inFlight.prefix(width).compactMap { entries[$0]?.record.item.relativePath }
            result[lane] = LaneOccupancy(name: lane.rawValue, busy: min(started, width), width: width,
                                         queued: waiting + queue.blocked.count + max(0, started - width),
                                         holding: holding)
        }
        return result
    }

    /// Slots taken in `lane`: running, blocked, timed out and not returned.
    func slotsUsed(in lane: Lane) -> Int { lanes[lane.index].slotsUsed }

    /// The run's outcome: every item's line in plan order (in a paged run, those not yet handed to the source), how
    /// it completed, progress and lane statistics.
    mutating func result() -> PipelineRunResult {
        var entriesOut = [FileOutcomeEntry]()
        entriesOut.reserveCapacity(order.count)
        // Records never admitted (the run stopped first) resume where they stand next run.
        let notAdmitted = Dictionary(waiting.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for id in order {
            if let ended = finished[id] {
                entriesOut.append(ended)
            } else if let record = entries[id]?.record ?? notAdmitted[id] {
                entriesOut.append(FileOutcomeEntry(record, leftUnfinished: true))
            }
        }
        let report = OutcomeReport(entries: entriesOut)
        let snapshot = progress.snapshot()
        let completion: RunOutcome
        switch stopReason {
        case .interrupted, .storeFailed: completion = .interrupted
        case .errorLimit: completion = .stoppedAtErrorLimit
        // Counted over the whole run: a paged run's report holds only the lines not handed back to its pages.
        case nil: completion = snapshot.count(.failed) > 0 || report.count(.failed) > 0 ? .someFailed : .success
        }
        return PipelineRunResult(completion: completion, report: report, progress: snapshot, statistics: statistics)
    }
}
