import CairnCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `CivilTime` and `Timestamp` replace Foundation's calendar and formatters; the C library and Foundation itself
/// are the oracles they are checked against.
@Suite struct CivilTimeTests {
    /// Instants spread over five centuries either side of 1970, with fractions of a second.
    static func sampleInstants(count: Int = 2_000) -> [Double] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in Double(Int64.random(in: -15_000_000_000...15_000_000_000, using: &generator))
            + Double(Int.random(in: 0..<1000, using: &generator)) / 1000 }
    }

    @Test func dayNumbersAndDatesAreInverses() {
        for days in stride(from: -800_000, through: 800_000, by: 331) {
            let (year, month, day) = CivilTime.civil(fromDays: days)
            #expect(CivilTime.days(fromYear: year, month: month, day: day) == days)
        }
        #expect(CivilTime.civil(fromDays: 0) == (1970, 1, 1))
        #expect(CivilTime.civil(fromDays: CivilTime.days(fromYear: 2024, month: 2, day: 29)) == (2024, 2, 29))
        #expect(CivilTime.days(fromYear: 2000, month: 3, day: 1) - CivilTime.days(fromYear: 2000, month: 2, day: 28) == 2)
        #expect(CivilTime.days(fromYear: 1900, month: 3, day: 1) - CivilTime.days(fromYear: 1900, month: 2, day: 28) == 1)
    }

    @Test func wallTimesInUTCAreTheCLibrarysGmtime() {
        for instant in Self.sampleInstants() {
            var time = time_t(instant.rounded(.down))
            var parts = tm()
            #expect(gmtime_r(&time, &parts) != nil)
            let civil = CivilTime(Date(timeIntervalSince1970: instant.rounded(.down)))
            #expect(civil.year == Int(parts.tm_year) + 1900 && civil.month == Int(parts.tm_mon) + 1
                    && civil.day == Int(parts.tm_mday))
            #expect(civil.hour == Int(parts.tm_hour) && civil.minute == Int(parts.tm_min)
                    && civil.second == Int(parts.tm_sec))
            #expect(civil.date() == Date(timeIntervalSince1970: instant.rounded(.down)))
        }
        // A damaged value is held to a far year instead of trapping.
        #expect(CivilTime(Date(timeIntervalSince1970: .infinity)).year > 3_000_000)
        #expect(CivilTime(Date(timeIntervalSince1970: -.greatestFiniteMagnitude)).year < -3_000_000)
    }

    @Test func timestampsAreWhatFoundationWritesAndReads() throws {
        let seconds = Date.ISO8601FormatStyle()
        // From 1621: Foundation's calendar turns Julian before 1582.
        for instant in Self.sampleInstants(count: 500) where instant > -11_000_000_000 {
            let date = Date(timeIntervalSince1970: instant)
            #expect(Timestamp.toTheSecond(date) == date.formatted(seconds))
            let written = Timestamp.withMilliseconds(date)
            let read = try #require(Timestamp.parse(written))
            #expect(abs(read.timeIntervalSince1970 - instant) < 0.0005)
            #expect(Timestamp.withMilliseconds(read) == written)
            let foundation = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(written)
            #expect(abs(foundation.timeIntervalSince1970 - read.timeIntervalSince1970) < 0.000_01)  // a few ulps at 1e10 s
        }
    }

    @Test func parsingTakesOffsetsAndAnyFractionAndRefusesTheRest() throws {
        let utc = try #require(Timestamp.parse("2026-11-22T03:20:15Z"))
        #expect(Timestamp.parse("2026-11-22T05:20:15+02:00") == utc)
        #expect(Timestamp.parse("2026-11-21T22:20:15-0500") == utc)
        #expect(try #require(Timestamp.parse("2026-11-22T03:20:15.5Z")).timeIntervalSince(utc) == 0.5)
        #expect(abs(try #require(Timestamp.parse("2026-11-22T03:20:15.123456Z")).timeIntervalSince(utc) - 0.123456) < 1e-6)
        for bad in ["2026-11-22 03:20:15Z", "2026-11-22T03:20:15", "2026-13-01T00:00:00Z", "2026-11-22T03:20:15+2:00",
                    "2026-11-22T24:00:00Z", "2026-11-22T03:20:15Zjunk", "", "yesterday"] {
            #expect(Timestamp.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func offsetsAreReadAndWrittenBothWays() {
        #expect(UTCOffset.parse("+02:00") == 7200 && UTCOffset.parse("+0200") == 7200 && UTCOffset.parse("+02") == 7200)
        #expect(UTCOffset.parse("-05:30") == -19_800 && UTCOffset.parse("Z") == 0)
        for bad in ["+2:00", "", "02:00", "+0:200", "+15:00", "+02:60", "+02:00:00"] {
            #expect(UTCOffset.parse(bad) == nil, "\(bad)")
        }
        for seconds in stride(from: -14 * 3600, through: 14 * 3600, by: 900) {
            #expect(UTCOffset.parse(UTCOffset.text(seconds)) == seconds)
        }
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        #expect(Timestamp.withMilliseconds(date, offsetSeconds: -3 * 3600) == "2023-11-14T19:13:20.250-03:00")
    }

    @Test func localTimeIsFoundationsCurrentZone() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        for instant in Self.sampleInstants(count: 300) where abs(instant) < 4_000_000_000 {
            let date = Date(timeIntervalSince1970: instant.rounded(.down))
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let civil = UTCOffset.local.civilTime(date)
            #expect([civil.year, civil.month, civil.day, civil.hour, civil.minute, civil.second]
                    == [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second].map { $0 ?? -1 })
        }
    }

    @Test func jsonDatesAreFoundationsISO8601() throws {
        struct Stamped: Codable, Equatable { var at: Date }
        let value = Stamped(at: Date(timeIntervalSince1970: 1_795_317_615))
        let ours = JSONEncoder()
        ours.dateEncodingStrategy = Timestamp.jsonEncoding
        let foundations = JSONEncoder()
        foundations.dateEncodingStrategy = .iso8601
        #expect(try ours.encode(value) == foundations.encode(value))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = Timestamp.jsonDecoding
        #expect(try decoder.decode(Stamped.self, from: foundations.encode(value)) == value)
        #expect(throws: DecodingError.self) { try decoder.decode(Stamped.self, from: Data(#"{"at":"soon"}"#.utf8)) }
    }
}
