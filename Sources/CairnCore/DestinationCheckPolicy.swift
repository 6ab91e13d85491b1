import Foundation

/// The two checks of the destination: every asset (`full`, every `check_destination_days`), or only what its trash
/// took since the last check (`trash`, cheap, the other runs).
public enum DestinationCheckKind: String, Sendable, Hashable, CaseIterable, Codable {
    case full, trash
}

/// What a sync does with drift: content cairn brought to the destination that the destination no longer shows.
public enum DriftMending: String, Sendable, CaseIterable {
    /// Record and report it; leave it alone (a deletion in the destination's own app is usually a person's choice).
    case report
    /// Bring it back while a source still holds it: from the destination's trash, or by bringing it in again.
    case restore
}

/// When a sync checks the destination against what cairn believes it brought there, and what it does with drift.
public struct DestinationCheckPolicy: Sendable, Equatable {
    public static let defaultEveryDays = 7
    public static let everyDaysRange = 1...365

    /// Days between full checks (`check_destination_days`); the runs between check only the destination's trash.
    public var everyDays: Int
    public var mending: DriftMending
    /// `--check-destination`: a full check this run, whenever the last one was.
    public var fullNow: Bool

    public init(everyDays: Int = Self.defaultEveryDays, mending: DriftMending = .report, fullNow: Bool = false) {
        self.everyDays = everyDays
        self.mending = mending
        self.fullNow = fullNow
    }

    /// The check this run makes, given when the last full check finished: a full one when asked for, when there
    /// was none, or when the last is `everyDays` old (or in the future: a clock set back); else the trash's.
    public func kind(lastFull: Date?, now: Date) -> DestinationCheckKind {
        guard !fullNow, let lastFull, lastFull <= now,
              now.timeIntervalSince(lastFull) < Double(everyDays) * 86_400 else { return .full }
        return .trash
    }

    /// How far back a trash check looks before the last check: the destination's clock may differ from this
    /// machine's; finding an asset twice changes nothing.
    public static let trashLookBehind: TimeInterval = 3_600
}
