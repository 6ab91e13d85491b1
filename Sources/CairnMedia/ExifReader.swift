import Foundation

/// What a still's EXIF block says, as far as import cares.
struct ExifSummary: Equatable, Sendable {
    var orientation: Orientation = .up
    /// `DateTimeOriginal` (or `DateTime`) as written, "YYYY:MM:DD HH:MM:SS".
    var dateTimeOriginal: String?
    /// `OffsetTimeOriginal`, e.g. "+02:00", when the camera recorded one.
    var offsetTimeOriginal: String?
    var make: String?
    var model: String?
    var gps: GPSCoordinate?
    /// `SubSecTimeOriginal`: the fraction of the second, as digits ("123").
    var subSecTimeOriginal: String?
    /// GPS date and time (always UTC), when the camera recorded them.
    var gpsInstant: Date?
    /// Apple's content identifier (MakerNote tag 0x11): the same UUID as the Live Photo's movie.
    var contentIdentifier: String?
    /// Apple's burst identifier (MakerNote tag 0x0B): the same UUID in every frame of one burst.
    var burstIdentifier: String?

    /// When the picture was taken, with its zone when the EXIF block tells it.
    var captureTime: CaptureTime? { CaptureTime.exif(self) }
}

/// A pure TIFF/EXIF reader over bytes: every offset is bounds-checked, nothing is trusted.
struct ExifReader {
    private let bytes: [UInt8]
    private let bigEndian: Bool

    /// `tiff` starts at the TIFF header ("II*\0" or "MM\0*").
    init?(tiff: [UInt8]) {
        guard tiff.count >= 8 else { return nil }
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        bytes = tiff
        guard u16(2) == 42 else { return nil }
    }

    func summary() -> ExifSummary {
        var result = ExifSummary()
        guard let ifd0 = u32(4).map(Int.init) else { return result }
        let main = entries(at: ifd0)
        if let value = main[0x0112].flatMap(integer), let orientation = Orientation(exifValue: value) {
            result.orientation = orientation
        }
        result.make = main[0x010F].flatMap(ascii)
        result.model = main[0x0110].flatMap(ascii)
        result.dateTimeOriginal = main[0x0132].flatMap(ascii)
        if let exifOffset = main[0x8769].flatMap(integer) {
            let exif = entries(at: exifOffset)
            if let original = exif[0x9003].flatMap(ascii) { result.dateTimeOriginal = original }
            result.offsetTimeOriginal = exif[0x9011].flatMap(ascii)
            result.subSecTimeOriginal = exif[0x9291].flatMap(ascii)
            if let makerNote = exif[0x927C], let apple = appleMakerNote(makerNote) {
                result.contentIdentifier = apple.tags[0x0011].flatMap(apple.reader.ascii)
                result.burstIdentifier = apple.tags[0x000B].flatMap(apple.reader.ascii)
            }
        }
        if let gpsOffset = main[0x8825].flatMap(integer) {
            let tags = entries(at: gpsOffset)
            result.gps = gps(tags)
            // GPSDateStamp "YYYY:MM:DD" and GPSTimeStamp (hours, minutes, seconds as rationals), UTC.
            if let date = tags[0x1D].flatMap(ascii), let time = tags[0x07].map(rationals), time.count == 3,
               let day = CaptureDateParser.parse(date + " 00:00:00", offset: "Z") {
                result.gpsInstant = day.addingTimeInterval(time[0] * 3600 + time[1] * 60 + time[2])
            }
        }
        return result
    }

    /// Apple's MakerNote: "Apple iOS\0", two version bytes, a byte-order mark ("MM"), then an IFD whose offsets
    /// count from the start of the MakerNote. Tag 0x11 is the content identifier a Live Photo's movie repeats, tag
    /// 0x0B the burst a frame belongs to.
    private func appleMakerNote(_ entry: Entry) -> (reader: ExifReader, tags: [Int: Entry])? {
        guard entry.count > 16, entry.count < 1 << 20 else { return nil }
        let note = Array(bytes[entry.valueOffset..<(entry.valueOffset + entry.count)])
        guard note.starts(with: Array("Apple iOS".utf8)), note.count > 16 else { return nil }
        let order: [UInt8] = note[12] == 0x49 ? [0x49, 0x49, 0x2A, 0x00] : [0x4D, 0x4D, 0x00, 0x2A]
        // Read the MakerNote as a TIFF block whose first IFD sits at offset 14.
        var tiff = note
        tiff.replaceSubrange(0..<4, with: order)
        let first: [UInt8] = note[12] == 0x49 ? [14, 0, 0, 0] : [0, 0, 0, 14]
        tiff.replaceSubrange(4..<8, with: first)
        guard let reader = ExifReader(tiff: tiff) else { return nil }
        return (reader, reader.entries(at: 14))
    }

    // MARK: - IFD entries

    struct Entry {
        let type: Int
        let count: Int
        /// Offset of the value bytes within the TIFF block.
        let valueOffset: Int
    }

    func entries(at offset: Int) -> [Int: Entry] {
        guard let count = u16(offset), count < 1000 else { return [:] }
        var result: [Int: Entry] = [:]
        for index in 0..<Int(count) {
            let at = offset + 2 + index * 12
            guard let tag = u16(at), let type = u16(at + 2), let count = u32(at + 4) else { break }
            let unit = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 7: 1, 9: 4, 10: 8][Int(type)] ?? 0
            guard unit > 0, count < 1 << 20 else { continue }
            let size = unit * Int(count)
            let valueOffset = size <= 4 ? at + 8 : Int(u32(at + 8) ?? UInt32.max)
            guard valueOffset >= 0, valueOffset + size <= bytes.count else { continue }
            result[Int(tag)] = Entry(type: Int(type), count: Int(count), valueOffset: valueOffset)
        }
        return result
    }

    private func integer(_ entry: Entry) -> Int? {
        switch entry.type {
        case 1, 7: return Int(bytes[entry.valueOffset])
        case 3: return u16(entry.valueOffset).map(Int.init)
        case 4, 9: return u32(entry.valueOffset).map(Int.init)
        default: return nil
        }
    }

    func ascii(_ entry: Entry) -> String? {
        guard entry.type == 2 || entry.type == 7 else { return nil }
        let raw = bytes[entry.valueOffset..<(entry.valueOffset + entry.count)].prefix { $0 != 0 }
        let text = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }

    private func rationals(_ entry: Entry) -> [Double] {
        guard entry.type == 5 || entry.type == 10 else { return [] }
        return (0..<entry.count).compactMap { index in
            let at = entry.valueOffset + index * 8
            guard let numerator = u32(at), let denominator = u32(at + 4), denominator != 0 else { return nil }
            if entry.type == 10 { return Double(Int32(bitPattern: numerator)) / Double(Int32(bitPattern: denominator)) }
            return Double(numerator) / Double(denominator)
        }
    }

    private func gps(_ tags: [Int: Entry]) -> GPSCoordinate? {
        func degrees(_ tag: Int) -> Double? {
            guard let entry = tags[tag] else { return nil }
            let parts = rationals(entry)
            guard parts.count == 3 else { return nil }
            return parts[0] + parts[1] / 60 + parts[2] / 3600
        }
        guard var latitude = degrees(2), var longitude = degrees(4),
              (-90...90).contains(latitude), (-180...180).contains(longitude) else { return nil }
        if tags[1].flatMap(ascii) == "S" { latitude = -latitude }
        if tags[3].flatMap(ascii) == "W" { longitude = -longitude }
        var altitude = tags[6].flatMap { rationals($0).first }
        if let below = tags[5].flatMap(integer), below == 1, let value = altitude { altitude = -value }
        return GPSCoordinate(latitude: latitude, longitude: longitude, altitude: altitude)
    }

    // MARK: - Bounds-checked reads

    private func u16(_ at: Int) -> UInt16? {
        guard at >= 0, at + 2 <= bytes.count else { return nil }
        let a = UInt16(bytes[at]), b = UInt16(bytes[at + 1])
        return bigEndian ? a << 8 | b : b << 8 | a
    }

    private func u32(_ at: Int) -> UInt32? {
        guard at >= 0, at + 4 <= bytes.count else { return nil }
        let v = bytes[at..<(at + 4)].map(UInt32.init)
        return bigEndian ? v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3] : v[3] << 24 | v[2] << 16 | v[1] << 8 | v[0]
    }
}
