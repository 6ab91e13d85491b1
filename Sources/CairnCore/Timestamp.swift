import Foundation

/// ISO 8601 times as cairn writes and reads them everywhere (run logs, the journal, the lock, the command line):
/// UTC, by `CivilTime`'s arithmetic, with no formatter object and no locale.
public enum Timestamp {
    /// "2026-11-22T03:20:15.123Z" (to the nearest millisecond): events and journal entries. With an offset, the
    /// wall time there and the offset: "2026-11-22T05:20:15.123+02:00" (what Immich keeps of a capture time).
    public static func withMilliseconds(_ date: Date, offsetSeconds: Int? = nil) -> String {
        let civil = CivilTime(date, offsetSeconds: offsetSeconds ?? 0)
        let zone = offsetSeconds.map(UTCOffset.text) ?? "Z"
        return "\(civil.dateText)T\(civil.clockText).\(civil.millisecondText)\(zone)"
    }

    /// "2026-11-22T03:20:15Z": what a person reads. The second is the one the time falls in, as a clock shows it.
    public static func toTheSecond(_ date: Date) -> String {
        let civil = CivilTime(Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down)))
        return "\(civil.dateText)T\(civil.clockText)Z"
    }

    /// A time written either way, or with an offset ("2026-11-22T05:20:15+02:00") and any fraction of a second;
    /// nil for anything else.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
        else { return nil }
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
        if bytes[end] == UInt8(ascii: ".") {
            var scale = 0.1
            end += 1
            while end < bytes.count, (48...57).contains(bytes[end]) {
                fraction += Double(bytes[end] - 48) * scale
                scale /= 10
                end += 1
            }
        }
        guard let offset = UTCOffset.parse(String(decoding: bytes[end...], as: UTF8.self)) else { return nil }
        let whole = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Date(timeIntervalSince1970: whole.date(offsetSeconds: offset).timeIntervalSince1970 + fraction)
    }

    /// For `JSONEncoder`: dates written as `toTheSecond` writes them (what `.iso8601` wrote, without ICU).
    public static var jsonEncoding: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(toTheSecond(date))
        }
    }

    /// For `JSONDecoder`: what `parse` reads.
    public static var jsonDecoding: JSONDecoder.DateDecodingStrategy {
        .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parse(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
            }
            return date
        }
    }
}
