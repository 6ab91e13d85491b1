import CairnCore
import Foundation
import Testing
@testable import CairnMedia

@Suite("Size planning")
struct SizePlanningTests {
    @Test func fitsShortSideAndNeverEnlarges() {
        #expect(SizePlanning.fitShortSide(width: 4000, height: 3000, shortSide: 250) == (333, 250))
        #expect(SizePlanning.fitShortSide(width: 3000, height: 4000, shortSide: 1440) == (1440, 1920))
        #expect(SizePlanning.fitShortSide(width: 200, height: 100, shortSide: 250) == (200, 100))
    }

    @Test func choosesLargestLowresThatKeepsTwiceTheTarget() {
        // 3000 short side: 1500, 750, 375 at levels 1...3; 2 x 250 = 500 allows level 2 only.
        #expect(SizePlanning.lowresLevel(width: 4000, height: 3000, targetShortSide: 250, maxLevel: 3) == 2)
        #expect(SizePlanning.lowresLevel(width: 4000, height: 3000, targetShortSide: 1440, maxLevel: 3) == 0)
        #expect(SizePlanning.lowresLevel(width: 4000, height: 3000, targetShortSide: 100, maxLevel: 3) == 3)
        #expect(SizePlanning.lowresLevel(width: 4000, height: 3000, targetShortSide: 100, maxLevel: 0) == 0)
    }

    @Test func clipSizeIsEvenBoundedAndNotEnlarged() {
        #expect(SizePlanning.clipSize(width: 4000, height: 3000, maxLongSide: 1920, maxShortSide: 1080) == (1440, 1080))
        #expect(SizePlanning.clipSize(width: 3000, height: 4000, maxLongSide: 1920, maxShortSide: 1080) == (1080, 1440))
        #expect(SizePlanning.clipSize(width: 6000, height: 1000, maxLongSide: 1920, maxShortSide: 1080) == (1920, 320))
        #expect(SizePlanning.clipSize(width: 321, height: 241, maxLongSide: 1920, maxShortSide: 1080) == (320, 240))
    }

    @Test func kenBurnsCropShrinksTowardsTheCentre() {
        let first = SizePlanning.kenBurnsCrop(width: 1000, height: 800, index: 0, count: 90, endZoom: 1.25)
        let last = SizePlanning.kenBurnsCrop(width: 1000, height: 800, index: 89, count: 90, endZoom: 1.25)
        #expect(first == (0, 0, 1000, 800))
        #expect(last == (100, 80, 800, 640))
    }
}

@Suite("Orientation")
struct OrientationTests {
    /// A 3x2 plane: 1 2 3 / 4 5 6.
    private func turned(_ orientation: Orientation) -> [UInt8] {
        let source: [UInt8] = [1, 2, 3, 4, 5, 6]
        var out = [UInt8](repeating: 0, count: 6)
        let size = orientation.displayed(width: 3, height: 2)
        source.withUnsafeBufferPointer { from in
            out.withUnsafeMutableBufferPointer { to in
                orientation.transform(plane: from.baseAddress!, width: 3, height: 2, stride: 3,
                                      into: to.baseAddress!, destinationStride: size.width)
            }
        }
        return out
    }

    @Test func everyExifOrientationTurnsAsSpecified() {
        #expect(turned(.identity) == [1, 2, 3, 4, 5, 6])
        #expect(turned(.flipHorizontal) == [3, 2, 1, 6, 5, 4])
        #expect(turned(.rotate180) == [6, 5, 4, 3, 2, 1])
        #expect(turned(.flipVertical) == [4, 5, 6, 1, 2, 3])
        #expect(turned(.transpose) == [1, 4, 2, 5, 3, 6])
        #expect(turned(.rotate90) == [4, 1, 5, 2, 6, 3])
        #expect(turned(.transverse) == [6, 3, 5, 2, 4, 1])
        #expect(turned(.rotate270) == [3, 6, 2, 5, 1, 4])
    }

    @Test func displayMatrixRotationMapsToClockwiseTurns() {
        #expect(Orientation(counterclockwiseDegrees: -90) == .rotate90)
        #expect(Orientation(counterclockwiseDegrees: 90) == .rotate270)
        #expect(Orientation(counterclockwiseDegrees: 180) == .rotate180)
        #expect(Orientation(counterclockwiseDegrees: .nan) == .identity)
        #expect(Orientation.rotate90.displayed(width: 4000, height: 3000) == (3000, 4000))
    }
}

@Suite("EXIF and dates")
struct ExifTests {
    @Test func readsTheFieldsAFixtureWrites() throws {
        var fields = CairnTestingExif.fields()
        fields.orientation = 6
        let header = StillHeader(bytes: CairnTestingExif.jpegHeader(fields))
        let exif = try #require(header.exif)
        #expect(exif.orientation == .rotate90)
        #expect(exif.make == "Cairn")
        #expect(exif.model == "Test Camera 1")
        #expect(exif.dateTimeOriginal == "2020:02:29 13:14:15")
        let gps = try #require(exif.gps)
        #expect(abs(gps.latitude - 48.8584) < 0.001)
        #expect(abs(gps.longitude + 2.2945) < 0.001)
    }

    @Test func hostileBytesNeverCrashTheReader() {
        var state: UInt64 = 1
        for length in [0, 1, 7, 8, 64, 4096] {
            let bytes = (0..<length).map { _ -> UInt8 in
                state = state &* 6364136223846793005 &+ 1
                return UInt8(truncatingIfNeeded: state >> 40)
            }
            #expect(ExifReader(tiff: Array("II".utf8) + [42, 0] + bytes)?.summary() != nil || length < 4)
            #expect(StillHeader(bytes: [0xFF, 0xD8, 0xFF, 0xE1] + bytes).container == .jpeg)
        }
    }

    @Test func parsesExifAndIsoDates() throws {
        let exif = try #require(CaptureDateParser.parse("2020:02:29 13:14:15"))
        #expect(exif.timeIntervalSince1970 == 1_582_982_055)
        let offset = try #require(CaptureDateParser.parse("2020:02:29 13:14:15", offset: "+02:00"))
        #expect(offset.timeIntervalSince1970 == 1_582_982_055 - 7200)
        let iso = try #require(CaptureDateParser.parse("2021-06-01T10:20:30.500000Z"))
        #expect(iso.timeIntervalSince1970 == 1_622_542_830.5)
        #expect(CaptureDateParser.parse("0000:00:00 00:00:00") == nil)
        #expect(CaptureDateParser.parse("garbage") == nil)
    }

    @Test func offsetsInEveryFormCamerasAndMuxersWrite() throws {
        #expect(UTCOffset.parse("+02:00") == 7200)
        #expect(UTCOffset.parse("+0200") == 7200)  // QuickTime's creationdate
        #expect(UTCOffset.parse("-05:30") == -19800)
        #expect(UTCOffset.parse("+09") == 32400)
        #expect(UTCOffset.parse("Z") == 0)
        #expect(UTCOffset.parse("+2:00") == nil && UTCOffset.parse("") == nil)
        // An iPhone movie's creationdate is its wall clock and offset: the instant is two hours earlier in UTC.
        let parsed = try #require(CaptureDateParser.parse("2023-07-14T10:44:00+0200"))
        #expect(parsed == CaptureDateParser.parse("2023-07-14T08:44:00Z"))
    }

    @Test func captureTimeKeepsTheWallClockItsOffsetAndWhereItCameFrom() throws {
        var exif = ExifSummary()
        exif.dateTimeOriginal = "2023:07:14 10:44:00"
        exif.subSecTimeOriginal = "123"
        exif.offsetTimeOriginal = "+02:00"
        let zoned = try #require(exif.captureTime)
        #expect(zoned.local == "2023-07-14T10:44:00.123" && zoned.offset == "+02:00" && zoned.source == "exif")
        let expected = try #require(CaptureDateParser.parse("2023-07-14T08:44:00.123Z"))
        #expect(abs(try #require(zoned.instant).timeIntervalSince(expected)) < 0.001)

        // No offset, but GPS time (UTC): the offset is derived, to the quarter hour.
        exif.offsetTimeOriginal = nil
        exif.gpsInstant = CaptureDateParser.parse("2023-07-14T08:43:58Z")
        let fromGPS = try #require(exif.captureTime)
        #expect(fromGPS.offset == "+02:00" && fromGPS.source == "exif+gps")
        #expect(fromGPS.instant == zoned.instant)

        // Neither: a floating wall time, no instant; it sorts as if it were UTC.
        exif.gpsInstant = nil
        let floating = try #require(exif.captureTime)
        #expect(floating.isFloating && floating.offset == nil && floating.local == "2023-07-14T10:44:00.123")
        let wall = try #require(CaptureDateParser.parse("2023-07-14T10:44:00.123Z"))
        #expect(abs(try #require(floating.sortDate).timeIntervalSince(wall)) < 0.001)

        // A Live Photo's movie (QuickTime creationdate) and its still land within 2 s of each other.
        let movie = try #require(CaptureTime.iso("2023-07-14T10:44:01+0200", source: "quicktime"))
        #expect(movie.local == "2023-07-14T10:44:01" && movie.offset == "+02:00")
        #expect(abs(try #require(movie.instant).timeIntervalSince(try #require(zoned.instant))) <= 2)

        // MP4's creation_time is UTC: an instant with no wall clock.
        let utc = try #require(CaptureTime.iso("2021-06-01T10:20:30.000000Z", source: "mp4"))
        #expect(utc.instant == CaptureDateParser.parse("2021-06-01T10:20:30Z") && utc.local == nil && utc.offset == nil)
    }

    @Test func captureTimeJSONKeepsTheFractionInTheInstantWhateverTheDateStrategy() throws {
        var exif = ExifSummary()
        exif.dateTimeOriginal = "2023:07:14 11:44:00"
        exif.subSecTimeOriginal = "814"
        exif.offsetTimeOriginal = "+01:00"
        let time = try #require(exif.captureTime)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601  // what the CLI's JSON uses, and what dropped the fraction
        let json = String(decoding: try encoder.encode(time), as: UTF8.self)
        #expect(json.contains(#""instant":"2023-07-14T10:44:00.814Z""#), "\(json)")
        #expect(json.contains(#""local":"2023-07-14T11:44:00.814""#), "\(json)")
        let back = try JSONDecoder().decode(CaptureTime.self, from: Data(json.utf8))
        #expect(abs(try #require(back.instant).timeIntervalSince(try #require(time.instant))) < 0.0005)
        #expect(back.local == time.local && back.offset == time.offset && back.source == time.source)

        // A whole second has no fraction; a catalog written before this stored the instant as a number.
        let whole = CaptureTime(instant: CaptureDateParser.parse("2023-07-14T10:44:00Z"), local: nil, offset: nil, source: "mp4")
        #expect(String(decoding: try encoder.encode(whole), as: UTF8.self).contains(#""2023-07-14T10:44:00Z""#))
        let stored = #"{"instant":711024240.814,"source":"exif"}"#
        let old = try JSONDecoder().decode(CaptureTime.self, from: Data(stored.utf8))
        #expect(old.instant.map(CaptureTime.instantText) == "2023-07-14T10:44:00.814Z")
    }

    @Test func parsesIso6709Locations() throws {
        let gps = try #require(GPSCoordinate(iso6709: "+37.7858-122.4064+012.300/"))
        #expect(gps == GPSCoordinate(latitude: 37.7858, longitude: -122.4064, altitude: 12.3))
        #expect(GPSCoordinate(iso6709: "nonsense") == nil)
    }
}

@Suite("Error funnel")
struct ErrorFunnelTests {
    @Test func classifiesReturnCodes() {
        let call = FFmpegCall(file: "/x.jpg")
        let corrupt = call.error(-1_094_995_529, "avcodec_send_packet")  // AVERROR_INVALIDDATA
        #expect(corrupt.category == .corrupt)
        #expect(!corrupt.isRetryable)
        #expect(corrupt.description == "/x.jpg: avcodec_send_packet: Invalid data found when processing input")
        let io = call.error(-5, "av_read_frame")  // AVERROR(EIO)
        #expect(io.category == .io)
        #expect(io.isRetryable)
        #expect(throws: MediaError.self) { try call.check(-22, "avcodec_open2") }
        #expect((try? call.check(3, "ok")) == 3)
    }
}

extension CaptureTime {
    /// A wall time with no zone and no other clock.
    var isFloating: Bool { instant == nil }
}
