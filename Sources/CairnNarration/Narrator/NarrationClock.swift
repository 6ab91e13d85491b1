import CairnCore
import Foundation

/// Where narration gets "now" from: the system clock in the product, a hand-driven one in tests.
public struct NarrationClock: Sendable {
    public let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    public static let system = NarrationClock { Date() }
}
