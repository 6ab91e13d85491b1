import Foundation

/// Lets an action through at most once per `interval`, judged by the timestamps it is given.
public struct Throttle: Sendable {
    public let interval: TimeInterval
    private var lastFired: Date?

    public init(interval: TimeInterval) { self.interval = interval }

    /// True (and remembers `time`) when `interval` has passed since the last time it said true.
    public mutating func shouldFire(at time: Date) -> Bool {
        // A clock that stepped backwards lets the action through rather than silencing it for the step's length.
        if let lastFired {
            let gap = time.timeIntervalSince(lastFired)
            if gap >= 0 && gap < interval { return false }
        }
        lastFired = time
        return true
    }
}
