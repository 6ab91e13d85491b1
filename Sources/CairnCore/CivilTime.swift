#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A date and a wall-clock time in the proleptic Gregorian calendar, at some offset from UTC. cairn reckons
/// these by arithmetic instead of through Foundation's `Calendar` and `TimeZone`, which load ICU's calendar and
/// zone tables (several MiB of resident memory) into every process that asks for one.
public struct CivilTime: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 0 to 999.
    public var millisecond: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, millisecond: Int = 0) {
        (self.year, self.month, self.day) = (year, month, day)
        (self.hour, self.minute, self.second, self.millisecond) = (hour, minute, second, millisecond)
    }

    /// `date` on a clock `offsetSeconds` east of UTC, to the nearest millisecond (so that a time written with
    /// milliseconds and read back is written the same again). A date past any calendar's use (a damaged catalog
    /// value) is held to some three million years either side of 1970 rather than trapping.
    public init(_ date: Date, offsetSeconds: Int = 0) {
        let scaled = (date.timeIntervalSince1970 + Double(offsetSeconds)) * 1000
        let milliseconds = scaled.isNaN ? 0 : Int64(min(max(scaled, -1e17), 1e17).rounded())
        let (seconds, millisecond) = Self.floorDivision(milliseconds, 1000)
        let (days, secondOfDay) = Self.floorDivision(seconds, 86_400)
        (year, month, day) = Self.civil(fromDays: Int(days))
        hour = Int(secondOfDay / 3600)
        minute = Int(secondOfDay % 3600 / 60)
        second = Int(secondOfDay % 60)
        self.millisecond = Int(millisecond)
    }

    /// The second `date` falls in, as a clock `offsetSeconds` east of UTC shows it (no rounding up to the next).
    public init(secondOf date: Date, offsetSeconds: Int = 0) {
        self.init(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)), offsetSeconds: offsetSeconds)
    }

    /// The wall time at the start of `bytes`, "YYYY?MM?DD?HH:MM:SS" with any separators (ISO 8601's, EXIF's), then
    /// an optional fraction of a second; with the index where what follows (a zone, or nothing) begins. Nil when
    /// a field is not digits or out of range.
    public static func read(_ bytes: [UInt8]) -> (wall: CivilTime, fraction: Double, end: Int)? {
        guard bytes.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard (48...57).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var end = 19
        var fraction = 0.0
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            var scale = 0.1
            end += 1
            while end < bytes.count, (48...57).contains(bytes[end]) {
                fraction += Double(bytes[end] - 48) * scale
                scale /= 10
                end += 1
            }
        }
        let wall = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return (wall, fraction, end)
    }

    /// The instant this wall time names on a clock `offsetSeconds` east of UTC.
    public func date(offsetSeconds: Int = 0) -> Date {
        let days = Self.days(fromYear: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return Date(timeIntervalSince1970: Double(seconds) + Double(millisecond) / 1000)
    }

    /// Days since 1970-01-01 (H. Hinnant's `days_from_civil`).
    public static func days(fromYear year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (its inverse, `civil_from_days`).
    public static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value >= 0 ? value / divisor : (value - divisor + 1) / divisor
        return (quotient, value - quotient * divisor)
    }
}

/// How far a clock is from UTC at a given instant: UTC itself, a fixed offset, or this machine's local time by
/// the C library's zone rules (`TZ`, `/etc/localtime`), which read the zone file and nothing else.
public struct UTCOffset: Sendable {
    private let seconds: @Sendable (Date) -> Int

    private init(secondsAt seconds: @escaping @Sendable (Date) -> Int) { self.seconds = seconds }

    /// Seconds east of UTC at `date`.
    public func seconds(at date: Date) -> Int { seconds(date) }

    /// The wall time this clock shows at `date`, to the second.
    public func civilTime(_ date: Date) -> CivilTime { CivilTime(secondOf: date, offsetSeconds: seconds(at: date)) }

    public static let utc = UTCOffset { _ in 0 }

    /// The machine's local time; UTC if the C library cannot tell.
    public static let local = UTCOffset { date in
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return Int(parts.tm_gmtoff)
    }

    /// The time in the IANA zone `identifier` ("Europe/Paris"), by the zone files; nil for a zone this machine
    /// does not know.
    public static func zone(_ identifier: String) -> UTCOffset? {
        guard !identifier.isEmpty, let zone = TimeZone(identifier: identifier) else { return nil }
        return UTCOffset { date in zone.secondsFromGMT(for: date) }
    }

    /// Seconds east of UTC for "+02:00", "+0200", "+02", "-05:30" or "Z"; nil for anything else.
    public static func parse(_ text: some StringProtocol) -> Int? {
        if text == "Z" { return 0 }
        let bytes = Array(text.utf8)
        guard let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let colon = bytes.count == 6 && bytes[3] == UInt8(ascii: ":")
        guard bytes.count == 3 || bytes.count == 5 || colon else { return nil }
        let digits = bytes.dropFirst().filter { $0 != UInt8(ascii: ":") || !colon }
        guard digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        let values = digits.map { Int($0 - 48) }
        let hours = values[0] * 10 + values[1]
        let minutes = digits.count == 4 ? values[2] * 10 + values[3] : 0
        guard hours <= 14, minutes < 60 else { return nil }
        return (sign == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// "+02:00" for 7,200 seconds east of UTC.
    public static func text(_ seconds: Int) -> String {
        let magnitude = abs(seconds)
        return (seconds < 0 ? "-" : "+") + CivilTime.twoDigits(magnitude / 3600) + ":"
            + CivilTime.twoDigits(magnitude % 3600 / 60)
    }
}

extension CivilTime {
    public static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    static func digits(_ value: Int, count: Int) -> String {
        let text = String(abs(value))
        let padded = text.count < count ? String(repeating: "0", count: count - text.count) + text : text
        return value < 0 ? "-" + padded : padded
    }

    /// "2026-11-22".
    public var dateText: String { "\(Self.digits(year, count: 4))-\(Self.twoDigits(month))-\(Self.twoDigits(day))" }

    /// "03:20:15".
    public var clockText: String { "\(Self.twoDigits(hour)):\(Self.twoDigits(minute)):\(Self.twoDigits(second))" }

    /// "015": the milliseconds, three digits.
    public var millisecondText: String { Self.digits(millisecond, count: 3) }

    /// "03:20".
    public var hourMinuteText: String { "\(Self.twoDigits(hour)):\(Self.twoDigits(minute))" }

    /// "20261122T032015": sorts as the time does.
    public var compactText: String {
        "\(Self.digits(year, count: 4))\(Self.twoDigits(month))\(Self.twoDigits(day))T"
            + "\(Self.twoDigits(hour))\(Self.twoDigits(minute))\(Self.twoDigits(second))"
    }
}
