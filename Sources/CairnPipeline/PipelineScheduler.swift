import CairnCore

/// Runs items through the transfer, metadata, thumbnail and synthesis lanes.
///
/// Every decision is made by ``SchedulerCore``, a value that takes events and returns actions (its
/// policies are listed there); this actor is the thin shell that feeds it events in order and performs
/// its actions: stage work in child tasks of the run that report back, timers on the injected clock, and every
/// state change persisted through one `RecordWriter` (in order, batched); a phase's stage work starts only
/// after its in-flight mark is saved (ahead of the records before it), except in the transfer lane
/// (`Lane.waitsForInFlightMark`).
///
/// Use (`PipelineImport` does this over the catalog, a page of planned items at a time):
/// ```
/// let scheduler = PipelineScheduler(configuration: try .defaults(cores: 2).applying(laneSpec: spec),
///                                   stages: stages, store: catalogStore, onEvent: narrate)
/// // on SIGINT/SIGTERM: Task { await scheduler.cancel(deadline: .seconds(5)) }
/// let result = try await scheduler.run(pages: plannedPages)
/// exit(result.exitStatus.rawValue)
/// ```
public actor PipelineScheduler {
    private var core: SchedulerCore
    private let stages: any PipelineStages
    private let store: any ItemStateStore
    private let clock: any Clock<Duration>
    private let onEvent: @Sendable (PipelineEvent) -> Void
    /// Per lane, the phases that may run stage work at once (the core starts `ahead` more, which wait here), small
    /// items' own runners included.
    private let runners: [Lane: LaneRunners]
    /// The decoders the decoding lanes share for items bigger than `smallItemBytes` (`PipelineConfiguration.decoders`),
    /// if they are bounded together.
    private let decoders: LaneRunners?

    private var writer: RecordWriter?
    private var pages: (any PlannedPageSource)?
    /// Why the page source failed, rethrown by `run` once the lanes have stopped.
    private var pageFailure: (any Error)?
    /// The writer's ticket for the last record handed to it: a phase's mark, which the phase may wait for.
    private var lastPersisted: UInt64 = 0
    /// While the core takes a phase's end in: what the phase made, for its item's next persisted move.
    private var madeByEndedPhase: (id: ItemID, products: any StageProducts)?
    /// Ends the waits for blocking work still running when the run ends.
    private let abandonment = Abandonment()
    /// Where phases, timers and page requests start: children of `run`'s task group (nil outside `run`).
    private var children: ChildTasks?
    private var phases: [UInt64: ChildTask] = [:]
    private var retryTimers: [ItemID: ChildTask] = [:]
    private var graceTimers: [UInt64: ChildTask] = [:]
    /// The runner each started phase holds or waits for, until its work returns or its grace runs out.
    private var leases: [UInt64: RunnerLease] = [:]
    private var deadlineTimer: ChildTask?
    /// Every running phase's timeout, watched by one task (made in `run`, stopped when the run ends).
    private var timeouts: (any PhaseDeadlines)?
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
        self.core = SchedulerCore(configuration: configuration, random: random)
        self.runners = Dictionary(uniqueKeysWithValues: Lane.allCases.map {
            ($0, LaneRunners(count: configuration[$0].width, smallItemRunners: configuration[$0].smallItemRunners))
        })
        self.decoders = configuration.decoders.map { LaneRunners(count: $0) }
        self.stages = stages
        self.store = store
        self.clock = clock
        self.onEvent = onEvent
    }

    /// Runs `records` (placeholders of a new plan and/or unfinished records of an earlier run, as the
    /// store holds them) to the end, or until stopped. Records still marked in flight go through the
    /// crash-loop guard first. Call once per scheduler.
    ///
    /// Throws only when the store fails (`PipelineError.alreadyRan` on a second call); per-file
    /// failures are in the result's report.
    /// `death`: how the worker that left records in flight died (the store's own recovery usually ran first).
    public func run(_ records: consuming [ItemRecord], after death: CrashLoopGuard.Death = .killed) async throws
        -> PipelineRunResult {
        try await run(first: records, pages: nil, after: death)
    }

    /// Runs every page `pages` gives, as one run: one record writer, one set of lanes that never drain between
    /// pages (the next page is asked for while the items in play fall below `pages.refillBelow`). The lines of
    /// ended items go back to `pages` with each ask; the result's report holds the rest.
    ///
    /// Throws when the store or the page source fails.
    public func run(pages: any PlannedPageSource, after death: CrashLoopGuard.Death = .killed) async throws
        -> PipelineRunResult {
        try await run(first: [], pages: pages, after: death)
    }

    private func run(first records: consuming [ItemRecord], pages: (any PlannedPageSource)?,
                     after death: CrashLoopGuard.Death) async throws -> PipelineRunResult {
        guard !hasRun else { throw PipelineError.alreadyRan }
        hasRun = true
        self.pages = pages
        let writer = RecordWriter(store: store, linger: core.configuration.commitLinger,
                                  maxBatch: core.configuration.commitBatchRecords,
                                  markLinger: core.configuration.markLinger) { [weak self] error in
            await self?.storeFailed(error)
        }
        self.writer = writer
        let timeouts = makePhaseDeadlines(clock: clock) { [weak self] token, timeout in
            await self?.phaseEnded(token, .timedOut(timeout))
        }
        self.timeouts = timeouts
        let children = ChildTasks()
        self.children = children
        let first = core.start(records, after: death, cancelledWithin: pendingCancelDeadline,
                               moreToCome: pages != nil, refillBelow: pages?.refillBelow ?? 0)
        // The run is one tree: the writer, the timeout watcher and every phase, timer and page request are children
        // of this group, which ends only when all of them have (blocking work still running when the run ends is
        // abandoned below; `BlockingWork` counts it until it returns).
        await withDiscardingTaskGroup { group in
            group.addTask { await writer.run() }
            group.addTask { await timeouts.watch() }
            perform(first)
            for await job in children.jobs { group.addTask(operation: job) }
            // Finished: what is still waiting (a grace or retry timer, an abandoned phase) is stopped.
            for signal in Array(phases.values) + graceTimers.values + retryTimers.values { signal.stop() }
            deadlineTimer?.stop()
            // A phase whose blocking work outlived its timeout and grace: its work runs on, unawaited.
            abandonment.abandon()
            timeouts.stop()
            writer.close()
        }
        self.children = nil
        try writer.rethrowFailure()
        if let pageFailure { throw pageFailure }
        return core.result()
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
        perform(core.cancel(deadline: deadline))
    }

    /// Lane occupancy so far.
    public var laneStatistics: LaneStatistics { core.statistics }

    /// What each lane holds right now, for a live view.
    public var occupancy: [Lane: LaneOccupancy] { core.occupancy }

    /// Slots taken in `lane` (running, blocked, timed out and not returned); for tests, which read it after
    /// the actor has handled an event.
    func slotsUsed(in lane: Lane) -> Int { core.slotsUsed(in: lane) }

    // MARK: Events in

    private func phaseEnded(_ token: UInt64, _ outcome: PhaseOutcome,
                            products: (id: ItemID, products: any StageProducts)? = nil) {
        // A timed-out phase keeps its runner until its work returns (a later call) or its grace ends.
        if case .timedOut = outcome {} else {
            leases[token] = nil
            phases[token] = nil
        }
        // What the phase made goes with the item's next move, if the core takes the outcome (a late one it drops).
        madeByEndedPhase = products
        perform(core.phaseEnded(token, outcome))
        madeByEndedPhase = nil
    }

    private func retryDue(_ id: ItemID, in lane: Lane) {
        retryTimers[id] = nil
        perform(core.retryDue(id, in: lane))
    }

    private func deadlineReached() { perform(core.deadlineReached()) }

    private func graceEnded(_ token: UInt64) {
        graceTimers[token] = nil
        leases.removeValue(forKey: token)?.release()
        perform(core.graceEnded(token))
    }

    private func storeFailed(_ error: any Error) { perform(core.storeFailed()) }

    private func pageArrived(_ result: Result<[ItemRecord]?, any Error>) {
        switch result {
        case .success(let records): perform(core.pageArrived(records))
        case .failure(let error):
            // The catalog could not plan the page: stop as when the store fails, and let `run` throw the reason.
            pageFailure = pageFailure ?? error
            perform(core.pageArrived(nil))
            perform(core.storeFailed())
        }
    }

    // MARK: Actions out

    private func perform(_ actions: [SchedulerAction]) {
        for action in actions {
            switch action {
            case .persist(let record):
                var products: (any StageProducts)?
                if let made = madeByEndedPhase, made.id == record.id {
                    products = made.products
                    madeByEndedPhase = nil
                }
                lastPersisted = writer?.enqueue(ItemMove(record, products: products)) ?? 0
                if let products { onEvent(.produced(record.item, products)) }
            case .emit(let event):
                onEvent(event)
            case .startPhase(let token, let item, let lane, let timeout, let alone):
                startPhase(token, item: item, lane: lane, timeout: timeout, alone: alone)
            case .cancelPhase(let token):
                phases.removeValue(forKey: token)?.stop()
            case .armGrace(let token, let delay):
                graceTimers[token] = children?.spawn { [clock] in
                    do { try await clock.sleep(for: delay) } catch { return }
                    await self.graceEnded(token)
                }
            case .disarmGrace(let token):
                graceTimers.removeValue(forKey: token)?.stop()
            case .scheduleRetry(let id, let lane, let delay):
                retryTimers[id] = children?.spawn { [clock] in
                    do { try await clock.sleep(for: delay) } catch { return }
                    await self.retryDue(id, in: lane)
                }
            case .cancelRetries:
                for timer in retryTimers.values { timer.stop() }
                retryTimers = [:]
            case .armDeadline(let deadline):
                deadlineTimer = children?.spawn { [clock] in
                    do { try await clock.sleep(for: deadline) } catch { return }
                    await self.deadlineReached()
                }
            case .disarmDeadline:
                deadlineTimer?.stop()
            case .requestPage(let ended):
                guard let pages else { break }
                children?.spawn {
                    do { await self.pageArrived(.success(try await pages.nextPage(ended: ended))) } catch {
                        await self.pageArrived(.failure(error))
                    }
                }
            case .finish:
                children?.finish()
            }
        }
    }

    /// The phase's stage work, once its in-flight mark is saved (in the lanes that wait for it) and a runner of
    /// its lane is free, raced against its timeout; either end reports back with the token (the loser finds the
    /// core has moved on). The runner goes back when the work returns, or when the grace after a timeout runs out.
    private func startPhase(_ token: UInt64, item: ImportItem, lane: Lane, timeout: Duration, alone: Bool) {
        guard let writer, let timeouts, let runners = runners[lane] else { return }
        let mark = lane.waitsForInFlightMark || alone ? lastPersisted : 0
        let small = item.byteCount <= core.configuration.smallItemBytes
        var pools = [runners]
        if lane.decodes, !small, let decoders { pools.append(decoders) }
        let lease = RunnerLease(pools, small: small)
        leases[token] = lease
        phases[token] = children?.spawn { [self, stages, abandonment] in
            do {
                if alone { try await writer.waitCommitted(mark) } else { try await writer.waitMarked(mark) }
                try await lease.acquire()
            } catch {
                // The store failed, or the phase was abandoned while it waited (its record is already persisted).
                await self.phaseEnded(token, .notStarted)
                return
            }
            timeouts.arm(token, timeout: timeout)
            let (outcome, products) = await withTaskCancellationHandler {
                await Abandonment.$current.withValue(abandonment) {
                    await PhaseOutcome.perform(lane, of: item, with: stages)
                }
            } onCancel: {
                timeouts.disarm(token)
            }
            timeouts.disarm(token)
            // The next phase waiting for a runner starts now, not once the actor has taken this end in.
            lease.release()
            await self.phaseEnded(token, outcome, products: products.map { (item.id, $0) })
        }
    }
}

/// Where a long run's records come from, a page at a time, each planned in the store as it is taken: the scheduler
/// asks for the next page while its lanes still hold work, never after they drain.
public protocol PlannedPageSource: Sendable {
    /// Items in play below which the next page is asked for (about a page).
    var refillBelow: Int { get }
    /// The next page of planned records; nil when there are no more. `ended`: what became of the items that ended
    /// since the last call, in plan order; the scheduler keeps no line of them. Called once at a time.
    func nextPage(ended: [FileOutcomeEntry]) async throws -> [ItemRecord]?
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
