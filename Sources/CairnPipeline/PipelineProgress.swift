import CairnCore

/// How much each lane weighs in the overall fraction. Lanes no item takes drop out.
public struct ProgressWeights: Hashable, Sendable {
    public var transfer: Double
    public var metadata: Double
    public var thumbnail: Double
    public var synthesis: Double

    public init(transfer: Double = 0.4, metadata: Double = 0.1, thumbnail: Double = 0.3, synthesis: Double = 0.2) {
        self.transfer = transfer
        self.metadata = metadata
        self.thumbnail = thumbnail
        self.synthesis = synthesis
    }

    public subscript(lane: Lane) -> Double {
        switch lane {
        case .transfer: return transfer
        case .metadata: return metadata
        case .thumbnail: return thumbnail
        case .synthesis: return synthesis
        }
    }
}

/// A snapshot for narration.
public struct PipelineProgress: Hashable, Sendable {
    public var totalItems: Int
    public var counts: [ItemState.Name: Int]
    /// Weighted: bytes for transfer, items for the other lanes. In 0...1, never decreasing within a run.
    public var fraction: Double
    /// What each lane holds at this moment (filled in by the scheduler), for a live view.
    public var lanes: [Lane: LaneOccupancy] = [:]

    public func count(_ name: ItemState.Name) -> Int { counts[name, default: 0] }
}

/// Pure progress bookkeeping: the scheduler reports every state change, narration reads snapshots.
///
/// A lane counts as done for an item once the item moved past it, or when the item ended (ready,
/// failed for good, cancelled) so its remaining lanes will never run. Credit only grows, and the
/// denominators are fixed when items are registered, so the fraction cannot go down.
public struct PipelineProgressTracker: Sendable {
    private struct Tracked: Sendable {
        var route: ItemRoute
        var byteCount: Int64
        var state: ItemState.Name
        var lanesDone: Int
    }

    private let weights: ProgressWeights
    /// Items with work left in this run; an item that finishes is only counted from then on.
    private var items: [ItemID: Tracked] = [:]
    private var registered = ItemIDSet()
    private var counts: [ItemState.Name: Int] = [:]
    private var totals = [Double](repeating: 0, count: 4)
    private var done = [Double](repeating: 0, count: 4)
    private var lastFraction = 0.0

    public init(weights: ProgressWeights = ProgressWeights()) {
        self.weights = weights
    }

    /// Room for `count` items, so the tracker's map is sized once rather than doubled as items register.
    public mutating func reserveCapacity(_ count: Int) {
        items.reserveCapacity(count)
    }

    /// Adds an item (once) at its current state; an item that ended before this run counts as done.
    /// Whether `id` was registered.
    public func contains(_ id: ItemID) -> Bool { registered.contains(id) }

    public mutating func register(_ item: ImportItem, route: ItemRoute, state: ItemState, finished: Bool) {
        guard registered.insert(item.id) else { return update(item.id, to: state, finished: finished) }
        let tracked = Tracked(route: route, byteCount: item.byteCount, state: state.name, lanesDone: 0)
        for lane in route.lanes { totals[lane.index] += units(of: tracked, in: lane) }
        items[item.id] = tracked
        counts[state.name, default: 0] += 1
        update(item.id, to: state, finished: finished)
    }

    /// Records a state change; `finished` says no more work will happen on the item in this run.
    public mutating func update(_ id: ItemID, to state: ItemState, finished: Bool) {
        guard var tracked = items[id] else { return }
        counts[tracked.state, default: 0] -= 1
        counts[state.name, default: 0] += 1
        tracked.state = state.name
        let lanes = tracked.route.lanes
        let reached: Int
        if finished || state == .ready || state == .cancelled {
            reached = lanes.count
        } else if let lane = state.activeLane ?? state.failure?.phase {
            reached = lanes.firstIndex(of: lane) ?? lanes.count
        } else {
            reached = 0
        }
        while tracked.lanesDone < reached {
            let lane = lanes[tracked.lanesDone]
            done[lane.index] += units(of: tracked, in: lane)
            tracked.lanesDone += 1
        }
        items[id] = finished ? nil : tracked
    }

    public mutating func snapshot() -> PipelineProgress {
        var weighted = 0.0
        var weightSum = 0.0
        for lane in Lane.allCases where totals[lane.index] > 0 {
            weighted += weights[lane] * min(1, done[lane.index] / totals[lane.index])
            weightSum += weights[lane]
        }
        let fraction = weightSum > 0 ? weighted / weightSum : (registered.isEmpty ? 1 : 0)
        lastFraction = min(1, max(lastFraction, fraction))
        return PipelineProgress(totalItems: registered.count, counts: counts.filter { $0.value != 0 },
                                fraction: lastFraction)
    }

    private func units(of tracked: Tracked, in lane: Lane) -> Double {
        // Bytes weigh the transfer lane; an empty file still counts as one unit so it registers.
        lane == .transfer ? Double(max(tracked.byteCount, 1)) : 1
    }
}
