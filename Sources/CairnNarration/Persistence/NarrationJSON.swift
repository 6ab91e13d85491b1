import CairnCore
import Foundation

/// The one JSON dialect of narration: ISO 8601 UTC times with milliseconds, fields absent rather than null.
public enum NarrationJSON {
    /// Times as "2026-11-22T03:20:15.123Z".
    public static func encoder(pretty: Bool = false) -> JSONEncoder { Timestamp.jsonEncoder(milliseconds: true, pretty: pretty) }

    public static func decoder() -> JSONDecoder { Timestamp.jsonDecoder() }

    /// One NDJSON line (with its newline) for `record`.
    public static func line(for record: NarrationRecord, encoder: JSONEncoder) -> String {
        guard let data = try? encoder.encode(record) else {
            // Encoding plain values cannot fail; keep the stream valid JSON regardless.
            return "{\"event\":\"error\",\"message\":\"unencodable event\"}\n"
        }
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
