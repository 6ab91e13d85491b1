/// When `cairn watch` starts a sync, as a pure state machine over seconds on a monotonic clock: the shell feeds it
/// changes, run ends and ticks, and does what it decides.
///
/// - Debounce: changes start a run once the tree has been quiet for `quiet`, or `maxDelay` after the first
///   change of a burst, whichever comes first (a tree that never stops changing is still synced).
/// - Coalesce: changes during a run start one more run after it, however many there were.
/// - Safety net: a full sync `fullSyncInterval` after the last run ended, changes or not (missed events,
///   an overflowed queue, a network share that sends none).
public struct WatchScheduler: Sendable, Equatable {
    public struct Settings: Sendable, Equatable {
        public var quiet: Double
        public var maxDelay: Double
        public var fullSyncInterval: Double

        public init(quiet: Double = 5, maxDelay: Double = 120, fullSyncInterval: Double = 6 * 3600) {
            self.quiet = quiet; self.maxDelay = maxDelay; self.fullSyncInterval = fullSyncInterval
        }
    }

    public enum Input: Sendable, Equatable {
        /// Something changed under the source.
        case changed
        /// The kernel dropped events: what changed is unknown, so a full sync is due.
        case overflowed
        case runEnded
        /// Time passed; the shell ticks a few times a second.
        case tick
        /// SIGTERM or SIGINT: stop once the run in flight (told to stop) has ended.
        case stop
    }

    public enum Reason: String, Sendable, Equatable {
        case startup, changes, overflow, periodic
    }

    public enum Decision: Sendable, Equatable {
        case startRun(Reason)
        /// Tell the run in flight to stop between items.
        case cancelRun
        /// Nothing runs: exit.
        case exit
    }

    public let settings: Settings
    public private(set) var isRunning = false
    public private(set) var isStopping = false
    /// What the next run is for, when one is due or waiting for quiet.
    public private(set) var pending: Reason? = .startup
    private var firstChange: Double?
    private var lastChange: Double?
    private var lastRunEnded: Double

    public init(settings: Settings, now: Double) {
        self.settings = settings
        lastRunEnded = now
    }

    public mutating func handle(_ input: Input, now: Double) -> [Decision] {
        switch input {
        case .changed, .overflowed:
            guard !isStopping else { return [] }
            firstChange = firstChange ?? now
            lastChange = now
            if input == .overflowed || pending == nil { pending = input == .overflowed ? .overflow : .changes }
            return []
        case .runEnded:
            isRunning = false
            lastRunEnded = now
            return isStopping ? [.exit] : due(now: now)
        case .tick:
            return due(now: now)
        case .stop:
            guard !isStopping else { return [] }
            isStopping = true
            return isRunning ? [.cancelRun] : [.exit]
        }
    }

    private mutating func due(now: Double) -> [Decision] {
        guard !isRunning, !isStopping else { return [] }
        var reason: Reason?
        if pending == .startup {
            reason = .startup
        } else if let first = firstChange, let last = lastChange,
                  now - last >= settings.quiet || now - first >= settings.maxDelay {
            reason = pending ?? .changes
        } else if firstChange == nil, now - lastRunEnded >= settings.fullSyncInterval {
            reason = .periodic
        }
        guard let reason else { return [] }
        isRunning = true
        pending = nil
        firstChange = nil
        lastChange = nil
        return [.startRun(reason)]
    }
}
