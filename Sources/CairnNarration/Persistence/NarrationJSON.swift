import CairnCore
import Foundation

/// The one JSON dialect of narration: ISO 8601 UTC times with milliseconds, fields absent rather than null.
public enum NarrationJSON {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
                                          : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(timestamp(date))
        }
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an ISO 8601 time: \(text)")
            }
            return date
        }
        return decoder
    }

    /// "2026-11-22T03:20:15.123Z".
    public static func timestamp(_ date: Date) -> String { Timestamp.withMilliseconds(date) }

    public static func parseTimestamp(_ text: String) -> Date? { Timestamp.parse(text) }

    /// One NDJSON line (with its newline) for `record`.
    public static func line(for record: NarrationRecord, encoder: JSONEncoder) -> String {
        guard let data = try? encoder.encode(record) else {
            // Encoding plain values cannot fail; keep the stream valid JSON regardless.
            return "{\"event\":\"error\",\"message\":\"unencodable event\"}\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
