import CairnCore
import Foundation

/// What a media file is, as a plain value: everything import needs to know before decoding.
public struct MediaProbe: Codable, Sendable, Equatable {
    /// One elementary stream in the container.
    public struct Stream: Codable, Sendable, Equatable {
        public var index: Int
        /// "video", "audio", "subtitle", "data", "attachment".
        public var type: String
        /// FFmpeg's codec name, e.g. "h264", "mjpeg", "aac".
        public var codec: String
        public var width: Int?
        public var height: Int?
    }

    /// The container (demuxer) name, e.g. "jpeg", "png", "mov,mp4,m4a,3gp,3g2,mj2".
    public var container: String
    public var kind: MediaKind
    public var streams: [Stream]
    /// Width and height as displayed: EXIF orientation (stills) or the display matrix (video) applied.
    public var width: Int?
    public var height: Int?
    /// How the stored picture is turned for display.
    public var orientation: Orientation
    public var durationSeconds: Double?
    public var frameRate: Double?
    /// Bits per second of the whole file, when the container states or implies it.
    public var bitRate: Int?
    public var hasAudio: Bool
    /// EXIF DateTimeOriginal for stills (UTC unless the camera wrote an offset), `creation_time` for videos.
    public var captureDate: Date?
    public var cameraMake: String?
    public var cameraModel: String?
    public var gps: GPSCoordinate?
    /// When it was taken, with its zone when the file tells it, and where that came from.
    public var captureTime: CaptureTime?
    /// The Apple content identifier a Live Photo's still and movie share (MakerNote tag 0x11 in the still,
    /// `com.apple.quicktime.content.identifier` in the movie).
    public var contentIdentifier: String?
    /// Apple's burst identifier (MakerNote tag 0x0B), the same in every frame of one burst: what stacks a burst.
    public var burstIdentifier: String?
    /// Where `gps` came from when it is not the file's own (`takeout-json`).
    public var gpsSource: String?
    /// The lens, for camera RAWs that name it.
    public var lens: String?
    /// The embedded ICC profile's description when the picture is not plain sRGB ("Display P3", "Adobe RGB (1998)").
    public var colourProfile: String?
    /// True for an animated GIF, WebP or PNG; the frame count when it is cheap to know.
    public var animated: Bool?
    public var frameCount: Int?
    /// Bits a sample as stored, when the format says (10 or 12 for an HDR HEIF, AVIF or video).
    public var bitDepth: Int?
    /// What making its thumbnail (and a still's clip) is estimated to hold at the peak (`MemoryEstimate`).
    public var memory: MemoryFootprint?
    /// What Google Photos knew of it, from the Takeout JSON beside it (filled when that sidecar is linked).
    public var googlePhotos: GooglePhotosFacts?

    public init(container: String, kind: MediaKind, streams: [Stream], width: Int? = nil, height: Int? = nil,
                orientation: Orientation = .identity, durationSeconds: Double? = nil, frameRate: Double? = nil,
                bitRate: Int? = nil, hasAudio: Bool = false, captureDate: Date? = nil,
                captureTime: CaptureTime? = nil,
                cameraMake: String? = nil, cameraModel: String? = nil, gps: GPSCoordinate? = nil,
                contentIdentifier: String? = nil, lens: String? = nil, colourProfile: String? = nil, animated: Bool? = nil, frameCount: Int? = nil) {
        self.container = container
        self.kind = kind
        self.streams = streams
        self.width = width
        self.height = height
        self.orientation = orientation
        self.durationSeconds = durationSeconds
        self.frameRate = frameRate
        self.bitRate = bitRate
        self.hasAudio = hasAudio
        self.captureDate = captureDate
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.gps = gps
        self.captureTime = captureTime
        self.contentIdentifier = contentIdentifier
        self.lens = lens
        self.colourProfile = colourProfile
        self.animated = animated
        self.frameCount = frameCount
    }
}

/// A position on Earth, in degrees (south and west negative) and metres above sea level.
public struct GPSCoordinate: Codable, Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?

    public init(latitude: Double, longitude: Double, altitude: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// Parses ISO 6709 as phones write it in QuickTime metadata: "+37.7858-122.4064+012.345/".
    init?(iso6709 text: String) {
        var numbers: [Double] = []
        var current = ""
        for character in text {
            if character == "+" || character == "-" || character == "/" {
                if let value = Double(current) { numbers.append(value) }
                current = character == "/" ? "" : String(character)
            } else {
                current.append(character)
            }
        }
        if let value = Double(current) { numbers.append(value) }
        guard numbers.count >= 2, (-90...90).contains(numbers[0]), (-180...180).contains(numbers[1]) else { return nil }
        self.init(latitude: numbers[0], longitude: numbers[1], altitude: numbers.count > 2 ? numbers[2] : nil)
    }
}

/// Dates as cameras and muxers write them, parsed without a shared formatter (thread-safe, no locale).
enum CaptureDateParser {
    /// "YYYY:MM:DD HH:MM:SS" (EXIF) or "YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+HH:MM]" (ISO 8601, `creation_time`);
    /// `offset` ("+02:00") applies when the text carries none; otherwise UTC.
    static func parse(_ text: String, offset: String? = nil) -> Date? {
        let bytes = Array(text.utf8)
        guard let read = CivilTime.read(bytes), read.wall.year > 1800 else { return nil }
        let zone = read.end < bytes.count ? String(decoding: bytes[read.end...], as: UTF8.self) : (offset ?? "")
        let instant = read.wall.date(offsetSeconds: UTCOffset.parse(zone) ?? 0)
        return Date(timeIntervalSince1970: instant.timeIntervalSince1970 + read.fraction)
    }
}

/// When a photo or clip was taken, as precisely as the file says: the instant when a zone or a UTC clock is
/// known, and the wall-clock time with its offset when the camera wrote one. A wall time with no zone is
/// "floating": it has no instant.
public struct CaptureTime: Codable, Sendable, Equatable {
    /// The moment, when the file tells it (a wall time with its offset, a UTC timestamp, or GPS time).
    public var instant: Date?
    /// The wall-clock time as written, "2023-07-14T10:44:00" or with a fraction "…:00.123", when there is one.
    public var local: String?
    /// The wall clock's offset from UTC, "+02:00", when known.
    public var offset: String?
    /// Where it came from: "exif", "exif+gps" (the offset derived from GPS time), "quicktime", "mp4", "raw".
    public var source: String

    public init(instant: Date?, local: String?, offset: String?, source: String) {
        self.instant = instant
        self.local = local
        self.offset = offset
        self.source = source
    }

    private enum CodingKeys: String, CodingKey { case instant, local, offset, source }

    /// The instant is written as ISO 8601 text with its fraction of a second whatever the encoder's date strategy
    /// (`.iso8601` drops fractions); older catalogs stored it as a number, which still reads.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let text = try? container.decodeIfPresent(String.self, forKey: .instant) {
            guard let parsed = CaptureDateParser.parse(text) else {
                throw DecodingError.dataCorruptedError(forKey: .instant, in: container, debugDescription: "not an ISO 8601 instant: \(text)")
            }
            instant = parsed
        } else {
            instant = try container.decodeIfPresent(Date.self, forKey: .instant)
        }
        local = try container.decodeIfPresent(String.self, forKey: .local)
        offset = try container.decodeIfPresent(String.self, forKey: .offset)
        source = try container.decode(String.self, forKey: .source)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(instant.map(Self.instantText), forKey: .instant)
        try container.encodeIfPresent(local, forKey: .local)
        try container.encodeIfPresent(offset, forKey: .offset)
        try container.encode(source, forKey: .source)
    }

    /// "2023-07-14T09:44:00.814Z": UTC, with milliseconds when the second has a fraction.
    public static func instantText(_ instant: Date) -> String {
        let nearest = Date(timeIntervalSince1970: (instant.timeIntervalSince1970 * 1000).rounded() / 1000)
        return CivilTime(nearest).millisecond == 0 ? Timestamp.toTheSecond(nearest) : Timestamp.withMilliseconds(nearest)
    }

    /// The date import keeps for sorting: the instant, else the floating wall time read as if it were UTC.
    public var sortDate: Date? { instant ?? local.flatMap { CaptureDateParser.parse($0, offset: "Z") } }

    /// EXIF `DateTimeOriginal` with `SubSecTimeOriginal` and `OffsetTimeOriginal`; without an offset, GPS time
    /// (always UTC) gives the instant and the offset, rounded to a quarter hour.
    static func exif(_ exif: ExifSummary, source: String = "exif") -> CaptureTime? {
        guard let written = exif.dateTimeOriginal, let wall = CaptureDateParser.parse(written, offset: "Z") else { return nil }
        var local = String(written.prefix(19)).replacingOccurrences(of: " ", with: "T")
        if local.count == 19 {
            local = String(local.prefix(4)) + "-" + local.dropFirst(5).prefix(2) + "-" + local.dropFirst(8)
        }
        let fraction = exif.subSecTimeOriginal.map { $0.filter(\.isNumber) }.flatMap { $0.isEmpty ? nil : $0 }
        if let fraction { local += "." + fraction }
        let subSeconds = fraction.flatMap { Double("0." + $0) } ?? 0
        if let offset = exif.offsetTimeOriginal, let seconds = UTCOffset.parse(offset) {
            return CaptureTime(instant: wall.addingTimeInterval(subSeconds - Double(seconds)), local: local,
                               offset: UTCOffset.text(seconds), source: source)
        }
        if let gps = exif.gpsInstant {
            let quarterHours = ((wall.timeIntervalSince(gps)) / 900).rounded()
            if abs(quarterHours) <= 14 * 4 {
                let seconds = Int(quarterHours) * 900
                return CaptureTime(instant: wall.addingTimeInterval(subSeconds - Double(seconds)), local: local,
                                   offset: UTCOffset.text(seconds), source: source + "+gps")
            }
        }
        return CaptureTime(instant: nil, local: local, offset: nil, source: source)
    }

    /// An ISO 8601 date as XMP writes it, with or without seconds or a zone ("2023-07-14T10:44:00+02:00").
    public static func parse(_ text: String, source: String) -> CaptureTime? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.count == 16 { text += ":00" }  // XMP may omit the seconds
        if text.count == 22, text.dropFirst(16).first == "+" || text.dropFirst(16).first == "-" {
            text = String(text.prefix(16)) + ":00" + text.dropFirst(16)
        }
        return iso(text, source: source)
    }

    /// An ISO 8601 date from a container: with an offset (QuickTime's `creationdate`) it keeps its wall time;
    /// with "Z" (MP4 `creation_time`) it is an instant only, the wall clock unknown.
    static func iso(_ text: String, source: String) -> CaptureTime? {
        guard let instant = CaptureDateParser.parse(text) else { return nil }
        let head = String(text.prefix(19))
        var rest = text.dropFirst(19)
        var fraction = ""
        if rest.hasPrefix(".") {
            fraction = String(rest.prefix { $0 == "." || $0.isNumber })
            rest = rest.dropFirst(fraction.count)
        }
        guard let seconds = UTCOffset.parse(String(rest)) else {
            return CaptureTime(instant: nil, local: head + fraction, offset: nil, source: source)
        }
        if rest == "Z" { return CaptureTime(instant: instant, local: nil, offset: nil, source: source) }
        return CaptureTime(instant: instant, local: head + fraction, offset: UTCOffset.text(seconds), source: source)
    }
}

extension MediaProbe {
    /// A probe as the catalog stores it (the metadata lane's default `JSONEncoder`); nil when it does not decode.
    public init?(storedJSON json: String) {
        guard let probe = try? JSONDecoder().decode(MediaProbe.self, from: Data(json.utf8)) else { return nil }
        self = probe
    }
}
