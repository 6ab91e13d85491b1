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

        public init(index: Int, type: String, codec: String, width: Int? = nil, height: Int? = nil) {
            self.index = index
            self.type = type
            self.codec = codec
            self.width = width
            self.height = height
        }
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
    /// The lens, for camera RAWs that name it.
    public var lens: String?
    /// The embedded ICC profile's description when the picture is not plain sRGB ("Display P3", "Adobe RGB (1998)").
    public var colourProfile: String?
    /// True for an animated GIF, WebP or PNG; the frame count when it is cheap to know.
    public var animated: Bool?
    public var frameCount: Int?

    public init(container: String, kind: MediaKind, streams: [Stream], width: Int? = nil, height: Int? = nil,
                orientation: Orientation = .identity, durationSeconds: Double? = nil, frameRate: Double? = nil,
                bitRate: Int? = nil, hasAudio: Bool = false, captureDate: Date? = nil,
                cameraMake: String? = nil, cameraModel: String? = nil, gps: GPSCoordinate? = nil,
                lens: String? = nil, colourProfile: String? = nil, animated: Bool? = nil, frameCount: Int? = nil) {
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
        let scalars = Array(text.utf8)
        guard scalars.count >= 19 else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let c = scalars[index]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year > 1800, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        var rest = String(decoding: scalars[19...], as: UTF8.self)
        var fraction = 0.0
        if rest.hasPrefix(".") {
            let digits = rest.dropFirst().prefix { $0.isNumber }
            fraction = Double("0." + digits) ?? 0
            rest = String(rest.dropFirst(1 + digits.count))
        }
        let zone = rest.isEmpty ? (offset ?? "") : rest
        var seconds = 0
        if zone.count >= 6, let sign = zone.first, sign == "+" || sign == "-" {
            let parts = zone.dropFirst().split(separator: ":")
            if parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]) {
                seconds = (sign == "-" ? -1 : 1) * (h * 3600 + m * 60)
            }
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let epoch = Double(days * 86_400 + hour * 3600 + minute * 60 + second - seconds) + fraction
        return Date(timeIntervalSince1970: epoch)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
