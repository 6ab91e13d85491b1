import Foundation

/// ISO 8601 times as cairn writes and reads them everywhere (run logs, the journal, the command line): UTC, one
/// format style each, never a formatter object per value.
public enum Timestamp {
    /// "2026-11-22T03:20:15.123Z": events and journal entries.
    public static let milliseconds = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    /// "2026-11-22T03:20:15Z": what a person reads.
    public static let seconds = Date.ISO8601FormatStyle()

    public static func withMilliseconds(_ date: Date) -> String { date.formatted(milliseconds) }
    public static func toTheSecond(_ date: Date) -> String { date.formatted(seconds) }

    /// A time written either way.
    public static func parse(_ text: String) -> Date? {
        (try? milliseconds.parse(text)) ?? (try? seconds.parse(text))
    }
}
