import CairnCore

/// The core's admission, dispatch, results and stopping rules (its events and queries are in SchedulerCore.swift).
extension SchedulerCore {
    // MARK: Admission

    mutating func takeActions() -> [SchedulerAction] {
        defer { actions = [] }
        return actions
    }

    /// Counts the item in (once: false for an id seen before) for the report's order and the progress.
    mutating func register(_ record: ItemRecord) -> Bool {
        guard !progress.contains(record.id) else { return false }
        order.append(record.id)
        progress.register(record.item, route: configuration.route(for: record.item), state: record.state,
                          finished: record.state.isTerminal)
        return true
    }

    /// Gives a registered item its entry: into the backlog of the lane it resumes in, among the crash suspects,
    /// or straight to `finished`. `persisting`: crash-loop recovery changed the record.
    mutating func admit(_ record: ItemRecord, persisting: Bool) {
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
            end(entry)
            return
        }
        guard route.runsInThisRun(lane) else {
            // Archive only: an item that owes only derivatives keeps its state for a run that makes them.
            return archive(entry)
        }
        if CrashLoopGuard.isSuspect(entry.record) {
            suspects.append(id)
        } else {
            lanes[lane.index].backlog.append(id)
        }
    }

    // MARK: Dispatch

    mutating func pump() {
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
        requestPageIfLow()
    }

    /// Asks for the next page while few items are in play, handing over the lines of the items that ended.
    mutating func requestPageIfLow() {
        guard moreToCome, !pageRequested, stopReason == nil, entries.count + waiting.count < refillBelow else { return }
        pageRequested = true
        actions.append(.requestPage(ended: takeEnded()))
    }

    /// The lines of the items that ended, in plan order; the core forgets them.
    mutating func takeEnded() -> [FileOutcomeEntry] {
        var ended: [FileOutcomeEntry] = []
        ended.reserveCapacity(finished.count)
        var stillInPlay: [ItemID] = []
        stillInPlay.reserveCapacity(order.count - finished.count)
        for id in order {
            if let line = finished.removeValue(forKey: id) { ended.append(line) } else { stillInPlay.append(id) }
        }
        order = stillInPlay
        return ended
    }

    mutating func refill(_ lane: Lane) -> Bool {
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

    mutating func startWork(in lane: Lane) -> Bool {
        var started = false
        while lanes[lane.index].slotsUsed < configuration[lane].slots, mayStart(in: lane) {
            let fromRetries = !lanes[lane.index].retryReady.isEmpty
            guard let id = fromRetries ? lanes[lane.index].retryReady.first : lanes[lane.index].inbox.first else { break }
            let admission = admitMemory(for: id, in: lane)
            if case .waits = admission { break }
            _ = fromRetries ? lanes[lane.index].retryReady.popFirst() : lanes[lane.index].inbox.popFirst()
            switch admission {
            case .waits: break
            case .admitted(let bytes): start(id, in: lane, memory: bytes)
            case .aboveLimit(let bytes, let limit): refuse(id, in: lane, needing: bytes, limit: limit)
            }
            started = true
        }
        return started
    }

    /// Whether `id`'s phase in `lane` may start now, as far as memory goes, and with how much of it.
    mutating func admitMemory(for id: ItemID, in lane: Lane) -> MemoryAdmission {
        // A lane whose work runs elsewhere (a shared queue's workers) holds none of this process's memory.
        guard let budget = configuration.memory, configuration[lane].holdsMemory, let entry = entries[id] else {
            return .admitted(0)
        }
        var bytes = entry.footprint?.bytes(in: lane) ?? MemoryFootprint.unprobed(entry.record.item, in: lane)
        if entry.record.item.byteCount <= configuration[lane].holdsItemsUpTo { bytes += 2 * entry.record.item.byteCount }
        let admission = budget.admission(of: bytes, besides: memoryInUse)
        if case .aboveLimit = admission { return admission }
        guard bytes > 0 else { return .admitted(0) }
        // Behind a lane waiting for memory, unless that lane could not start its phase anyway (its slots full, or
        // its clips behind thumbnails): then it holds nothing back.
        if let waiter = memoryWaiter, waiter != lane, lanes[waiter.index].slotsUsed < configuration[waiter].slots,
           lanes[waiter.index].hasWaitingWork, mayStart(in: waiter) { return .waits }
        memoryWaiter = admission == .waits ? lane : nil
        return admission
    }

    /// Fails the phase before it starts: its estimate is above what the kernel lets media work hold, so running it
    /// would have the worker killed (and every item in flight with it).
    mutating func refuse(_ id: ItemID, in lane: Lane, needing bytes: Int64, limit: Int64) {
        guard var entry = entries[id] else { return }
        if entry.record.state != lane.activeState { move(&entry, to: lane.activeState) }
        entry.attemptsInPhase += 1
        entries[id] = entry
        let work = lane == .synthesis ? "make its clip" : lane == .thumbnail ? "decode it for its thumbnail" : "read it"
        fail(id, in: lane, reason: FailureReason(
            "needs about \(MemoryBudget.formatted(bytes)) of memory to \(work), more than the "
            + "\(MemoryBudget.formatted(limit)) the memory limit leaves this run (raise the cgroup's limit)",
            category: .memory), retryable: false)
    }

    /// Every thumbnail before any clip, except when thumbnails wait on a full synthesis inbox.
    func mayStart(in lane: Lane) -> Bool {
        // A clip waiting for memory holds thumbnails back (`admitMemory`): it goes first.
        guard lane == .synthesis, memoryWaiter != .synthesis else { return true }
        let thumbnail = lanes[Lane.thumbnail.index]
        return !thumbnail.hasWaitingWork || !thumbnail.blocked.isEmpty
    }

    mutating func startNextSuspectIfIdle() -> Bool {
        if let active = activeSuspect {
            guard entries[active] == nil else { return false }
            activeSuspect = nil
        }
        // After everything else, the pages not taken yet included: a page arriving later would run beside it.
        guard !moreToCome, !pageRequested, waiting.isEmpty, lanes.allSatisfy(\.isIdle), backoff.isEmpty,
              running.isEmpty,
              let id = suspects.popFirst(), let lane = entries[id]?.record.state.resumeLane else { return false }
        activeSuspect = id
        lanes[lane.index].inbox.append(id)
        return true
    }

    mutating func start(_ id: ItemID, in lane: Lane, memory: Int64) {
        guard var entry = entries[id] else { return }
        if entry.record.state != lane.activeState { move(&entry, to: lane.activeState) }
        entry.record.inFlight = true
        let alone = id == activeSuspect
        entry.record.runsAlone = alone
        entry.attemptsInPhase += 1
        entries[id] = entry
        actions.append(.persist(entry.record))
        lanes[lane.index].inFlight.insert(id)
        statistics.maxInFlight[lane] = max(statistics.maxInFlight[lane, default: 0], lanes[lane.index].inFlight.count)
        actions.append(.emit(.phaseStarted(entry.record.item, lane, attempt: entry.attemptsInPhase)))
        let token = nextToken
        nextToken += 1
        let item = entry.record.item
        running[token] = RunningPhase(id: id, lane: lane, memory: memory)
        memoryInUse += memory
        actions.append(.startPhase(token: token, item: item, lane: lane,
                                   timeout: configuration[lane].timeout.duration(forBytes: item.byteCount), alone: alone))
    }

    // MARK: Results

    mutating func succeed(_ id: ItemID, in lane: Lane, duplicate: Bool) {
        guard var entry = entries[id] else { return }
        entry.attemptsInPhase = 0
        entry.record.phaseReturned()
        let next = duplicate ? nil : lane.next(on: entry.route)
        if duplicate { entry.record.isDuplicate = true }
        move(&entry, to: next?.activeState ?? .ready)
        entries[id] = entry
        guard let next else {
            end(entry)
            return
        }
        guard entry.route.runsInThisRun(next) else {
            // Archive only: the original is in place; the item waits, owing `next`, for a run with derivatives.
            return archive(entry)
        }
        guard stopReason == nil else { return }
        let capacity = configuration[next].inboxCapacity
        if lanes[lane.index].blocked.isEmpty && (lanes[next.index].inbox.count < capacity || id == activeSuspect) {
            lanes[next.index].inbox.append(id)
            noteInbox(next)
        } else {
            lanes[lane.index].blocked.append(id)
            actions.append(.emit(.backPressure(entry.record.item, lane: lane)))
        }
    }

    mutating func fail(_ id: ItemID, in lane: Lane, reason: FailureReason, retryable: Bool) {
        guard var entry = entries[id] else { return }
        let attempt = entry.attemptsInPhase
        // It failed, it did not crash: the crash counts go, so a failure for good is never taken for the guard's.
        entry.record.phaseReturned()
        move(&entry, to: .failed(ItemFailure(phase: lane, reason: reason, attempts: attempt, retryable: retryable)))
        entries[id] = entry
        if retryable && attempt < configuration.maxAttempts {
            // Stopping: no retry now; the record stays failed-retryable and the next run retries it.
            guard stopReason == nil else { return }
            let delay = configuration.backoff.delay(after: attempt, draw: nextUnitRandom())
            actions.append(.emit(.retryScheduled(entry.record.item, lane, attempt: attempt + 1, delay: delay, reason: reason)))
            backoff.insert(id)
            actions.append(.scheduleRetry(id, lane, after: delay))
            return
        }
        progress.update(id, to: entry.record.state, finished: true)
        end(entry)
        emitProgress()
        finalFailures += 1
        if let limit = configuration.maxErrors, finalFailures >= limit, stopReason == nil {
            stop(.errorLimit)
        }
    }

    /// The phase's work goes on elsewhere: the item ends this run owing the phase (stored out of flight), and the
    /// next run takes it up there.
    mutating func leaveToOthers(_ id: ItemID) {
        guard var entry = entries[id] else { return }
        entry.attemptsInPhase = 0
        entry.record.phaseReturned()
        entries[id] = entry
        actions.append(.persist(entry.record))
        archive(entry)
        emitProgress()
    }

    // MARK: Stopping

    mutating func stopForCancel(deadline: Duration) {
        stop(.interrupted)
        if deadline <= .zero {
            abandonRunningPhases()
        } else if running.values.contains(where: { !$0.timedOut }) {
            actions.append(.armDeadline(deadline))
        }
    }

    mutating func stop(_ reason: StopReason) {
        stopReason = reason
        actions.append(.emit(.stopping(reason)))
        // Items waiting out a backoff stay failed-retryable in the store: the next run retries them.
        backoff = []
        actions.append(.cancelRetries)
    }

    mutating func abandonRunningPhases() {
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
            entry.record.runsAlone = false
            entries[phase.id] = entry
            actions.append(.persist(entry.record))
            actions.append(.emit(.abandoned(entry.record.item, phase.lane)))
        }
        running = [:]
        memoryInUse = 0
        memoryWaiter = nil
        finishIfDone()
    }

    mutating func finishIfDone() {
        guard isRunning else { return }
        // Timed-out work that never returns does not hold the run: the worker waits for it, within a limit,
        // before it lets go of the library.
        let working = running.values.contains { !$0.timedOut }
        let done: Bool
        if stopReason != nil {
            // A page asked for is planned in the store: it is awaited, and reported unfinished.
            done = !working && !pageRequested
        } else {
            done = !working && !moreToCome && !pageRequested && backoff.isEmpty && suspects.isEmpty && waiting.isEmpty
                && (activeSuspect.map { entries[$0] == nil } ?? true) && lanes.allSatisfy(\.isIdle)
        }
        guard done else { return }
        isRunning = false
        actions.append(.disarmDeadline)
        actions.append(.finish)
    }

    // MARK: Helpers

    /// Moves an entry's state through the machine, records progress and emits events; persists.
    mutating func move(_ entry: inout Entry, to next: ItemState) {
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

    /// Done for this run as it stands (archive only): its state is kept, owing its derivatives.
    mutating func archive(_ entry: Entry) {
        progress.update(entry.record.id, to: entry.record.state, finished: true)
        end(entry)
    }

    /// The item is done for this run: only its report line is kept, its outcome read from where it stands (the
    /// catalog reads the same from the stored record).
    mutating func end(_ entry: Entry) {
        let id = entry.record.id
        finished[id] = FileOutcomeEntry(entry.record, leftUnfinished: false)
        entries[id] = nil
    }

    mutating func emitProgress() {
        var snapshot = progress.snapshot()
        snapshot.lanes = occupancy
        actions.append(.emit(.progress(snapshot)))
    }

    mutating func noteInbox(_ lane: Lane) {
        let count = lanes[lane.index].inbox.count
        if count > statistics.maxInboxOccupancy[lane, default: 0] { statistics.maxInboxOccupancy[lane] = count }
    }

    mutating func nextUnitRandom() -> Double {
        Double(random.next() >> 11) * 0x1p-53
    }
}

extension ItemRecord {
    /// A phase's work came back (done or failed): the item is no longer in flight, and it did not kill the worker.
    mutating func phaseReturned() {
        inFlight = false
        runsAlone = false
        crashCount = 0
        killCount = 0
    }
}
