import CairnCore
import Foundation

/// When one phase started and how long it took (`durationSeconds` is nil while it runs).
public struct PhaseEntry: Codable, Sendable, Equatable {
    public var phase: SyncPhase
    public var startedAt: Date
    public var durationSeconds: Double?

    public init(phase: SyncPhase, startedAt: Date, durationSeconds: Double? = nil) {
        self.phase = phase; self.startedAt = startedAt; self.durationSeconds = durationSeconds
    }

    public var isOpen: Bool { durationSeconds == nil }

    /// Duration so far: the final one once closed, else up to `now`.
    public func elapsed(at now: Date) -> Double {
        durationSeconds ?? max(0, now.timeIntervalSince(startedAt))
    }
}

/// The phases of one run in the order they started.
public struct PhaseTimeline: Codable, Sendable, Equatable {
    public private(set) var entries: [PhaseEntry] = []

    public init(entries: [PhaseEntry] = []) { self.entries = entries }

    /// Opens `phase`; a phase that is already open stays as it is.
    public mutating func start(_ phase: SyncPhase, at time: Date) {
        guard !entries.contains(where: { $0.phase == phase && $0.isOpen }) else { return }
        entries.append(PhaseEntry(phase: phase, startedAt: time))
    }

    /// Closes the open entry of `phase`, if any.
    public mutating func end(_ phase: SyncPhase, at time: Date) {
        guard let index = entries.lastIndex(where: { $0.phase == phase && $0.isOpen }) else { return }
        entries[index].durationSeconds = max(0, time.timeIntervalSince(entries[index].startedAt))
    }

    /// Closes every open phase (the run ended, maybe by failure).
    public mutating func endAll(at time: Date) {
        for entry in entries where entry.isOpen { end(entry.phase, at: time) }
    }

    /// The newest open phase.
    public var currentPhase: SyncPhase? { entries.last(where: \.isOpen)?.phase }

    public func entry(for phase: SyncPhase) -> PhaseEntry? { entries.last(where: { $0.phase == phase }) }
}
