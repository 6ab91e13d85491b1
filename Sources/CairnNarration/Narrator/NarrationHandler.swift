import CairnCore
import Foundation

/// Receives every event a `Narrator` emits: a renderer, a run log, a test recorder.
///
/// Called from whichever task narrates, one event at a time and in `seq` order (the narrator serialises calls,
/// outside its own lock), so implementations need only protect state they share with other callers (a ticker, a
/// reader).
public protocol NarrationHandler: Sendable {
    func handle(_ record: NarrationRecord)
}

/// Drops everything.
public struct DiscardingNarrationHandler: NarrationHandler {
    public init() {}
    public func handle(_ record: NarrationRecord) {}
}

/// Sends each event to several handlers in order: the terminal view and the run log at once.
public struct MultiplexNarrationHandler: NarrationHandler {
    public let handlers: [any NarrationHandler]

    public init(_ handlers: [any NarrationHandler]) { self.handlers = handlers }

    public func handle(_ record: NarrationRecord) {
        for handler in handlers { handler.handle(record) }
    }
}

/// Keeps the state a run builds (and, unless told otherwise, every event): for tests, and for the worker to
/// read the run's summary at the end.
public final class InMemoryNarrationHandler: NarrationHandler {
    private struct Storage {
        var events: [NarrationRecord] = []
        var state = NarrationState()
    }

    private let keepsEvents: Bool
    private let storage = Locked(Storage())

    public init(keepsEvents: Bool = true) { self.keepsEvents = keepsEvents }

    public func handle(_ record: NarrationRecord) {
        storage.withLock { storage in
            if keepsEvents { storage.events.append(record) }
            storage.state.apply(record)
        }
    }

    public var events: [NarrationRecord] { storage.withLock { $0.events } }
    public var state: NarrationState { storage.withLock { $0.state } }

    public func events(of kind: NarrationEvent.Kind) -> [NarrationRecord] { events.filter { $0.kind == kind } }
}
