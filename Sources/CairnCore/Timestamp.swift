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
        let civil = CivilTime(secondOf: date)
        return "\(civil.dateText)T\(civil.clockText)Z"
    }

    /// A time written either way, or with an offset ("2026-11-22T05:20:15+02:00") and any fraction of a second;
    /// nil for anything else.
    public static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let read = CivilTime.read(bytes),
              let offset = UTCOffset.parse(String(decoding: bytes[read.end...], as: UTF8.self))
        else { return nil }
        return Date(timeIntervalSince1970: read.wall.date(offsetSeconds: offset).timeIntervalSince1970 + read.fraction)
    }

    /// For `JSONEncoder`: dates written as `toTheSecond` writes them (what `.iso8601` wrote, without ICU).
    public static var jsonEncoding: JSONEncoder.DateEncodingStrategy {
        .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(toTheSecond(date))
        }
    }

    /// The one JSON style of what cairn writes: keys sorted, slashes as they are, dates as `toTheSecond` writes
    /// them (`milliseconds`: as `withMilliseconds` does, for the narration and the journal); `pretty` indents.
    public static func jsonEncoder(milliseconds: Bool = false, pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = milliseconds ? .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(withMilliseconds(date))
        } : jsonEncoding
        return encoder
    }

    /// Reads what `jsonEncoder` writes (dates as `parse` reads them).
    public static func jsonDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = jsonDecoding
        return decoder
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
