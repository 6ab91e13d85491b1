import CairnCore
import CairnNarration
import Foundation

/// A clock that moves only when told to: narration's time in tests.
public final class ManualNarrationClock: Sendable {
    private let current: Locked<Date>

    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Locked(start) }

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    public func set(_ date: Date) { current.withLock { $0 = date } }

    public var clock: NarrationClock { NarrationClock { [self] in self.now } }
}
