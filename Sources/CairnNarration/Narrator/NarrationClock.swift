import CairnCore
import Foundation

/// Where narration gets "now" from: the system clock in the product, a hand-driven one in tests.
public struct NarrationClock: Sendable {
    public let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    public static let system = NarrationClock { Date() }
}

/// A clock that moves only when told to; for tests and replays.
public final class ManualNarrationClock: Sendable {
    private let current: Locked<Date>

    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    public func set(_ date: Date) { current.withLock { $0 = date } }

    public var clock: NarrationClock { NarrationClock { [self] in self.now } }
}
