import CairnCore
import Foundation
import GRDB

/// Dates as the SQLite catalog stores them: UTC text, "2026-11-22 03:20:15.123" (GRDB's own format, so that rows
/// written either way compare and sort alike in SQL), read and written by `CivilTime`. GRDB's default goes through
/// a Foundation `DateFormatter` and `Calendar`, which load ICU's tables (several MiB) into the process; every date
/// the catalog binds or reads goes through here instead.
enum StoredDate {
    static func text(_ date: Date) -> String {
        let civil = CivilTime(date)
        return civil.dateText + " " + civil.clockText + "." + civil.millisecondText
    }

    /// Text in any of SQLite's date formats (with or without a zone), or a number of seconds since 1970, as
    /// GRDB reads them.
    @Sendable static func date(_ value: DatabaseValue) -> Date? {
        guard let stored = DatabaseDateComponents.fromDatabaseValue(value) else {
            return Double.fromDatabaseValue(value).map(Date.init(timeIntervalSince1970:))
        }
        let parts = stored.dateComponents
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return nil }
        let wall = CivilTime(year: year, month: month, day: day, hour: parts.hour ?? 0, minute: parts.minute ?? 0,
                             second: parts.second ?? 0)
        let instant = wall.date(offsetSeconds: parts.timeZone?.secondsFromGMT() ?? 0)
        return Date(timeIntervalSince1970: instant.timeIntervalSince1970 + Double(parts.nanosecond ?? 0) / 1e9)
    }

    /// `date(_:)` for a value fetched on its own.
    static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments) throws -> Date? {
        try DatabaseValue.fetchOne(db, sql: sql, arguments: arguments).flatMap(date)
    }
}

/// Every record the SQLite catalog reads or writes (those without a date too, so that a date column added later
/// cannot slip back to GRDB's default): its `Date` columns are read and written as `StoredDate` does.
public protocol CatalogRecord {}

extension CatalogRecord where Self: FetchableRecord {
    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .custom(StoredDate.date)
    }
}

extension CatalogRecord where Self: EncodableRecord {
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { StoredDate.text($0) }
    }
}
