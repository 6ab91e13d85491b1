import Foundation

/// Test media made with the `ffmpeg` CLI, plus hand-built EXIF and hostile files.
public enum MediaFixtures {
    /// A camera-like JPEG: a smooth gradient with light noise.
    @discardableResult
    public static func jpeg(at path: String, width: Int, height: Int, quality: Int = 3) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "gradients=s=\(width)x\(height):seed=7,noise=alls=6:allf=t",
            "-frames:v", "1", "-q:v", String(quality), path,
        ])
        return path
    }

    /// A `width`x`height` JPEG whose left half is red and right half blue, with EXIF `orientation`,
    /// a capture date, camera make and model and a GPS position. With orientation 6 it displays as
    /// a portrait picture, red on top.
    @discardableResult
    public static func jpegWithExif(at path: String, width: Int = 320, height: Int = 240, orientation: Int = 6,
                                    exif: ExifFields = ExifFields()) throws -> String {
        let half = width / 2
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=c=red:s=\(half)x\(height),pad=\(width):\(height):0:0:blue",
            "-frames:v", "1", "-q:v", "2", path,
        ])
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var fields = exif
        fields.orientation = orientation
        let tiff = fields.tiffBytes()
        let length = tiff.count + 8
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)]
            + Array("Exif".utf8) + [0, 0] + tiff
        bytes.insert(contentsOf: segment, at: 2)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A landscape `width`x`height` video (testsrc2) with a sine audio track.
    @discardableResult
    public static func video(at path: String, width: Int = 320, height: Int = 180, seconds: Double = 2,
                             creationTime: String? = "2021-06-01T10:20:30.000000Z") throws -> String {
        var arguments = [
            "-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height):r=30", "-f", "lavfi", "-i", "sine=frequency=440",
            "-t", String(seconds), "-c:v", "libx264", "-preset", "ultrafast", "-g", "15", "-pix_fmt", "yuv420p",
            "-c:a", "aac",
        ]
        if let creationTime { arguments += ["-metadata", "creation_time=\(creationTime)"] }
        try ExternalTool.ffmpeg(arguments + [path])
        return path
    }

    /// An iPhone Live Photo: `STEM.JPG` (taken 2023-07-14 10:44:00) and `STEM.MOV` (a second later, +02:00) sharing
    /// Apple's content identifier, in `folder`.
    public static func livePhoto(in folder: String, stem: String) throws {
        let identifier = "5F9B0D47-2C3E-4F6A-9B1D-0E7C8A6B5D42"
        var still = ExifFields()
        still.dateTimeOriginal = "2023:07:14 10:44:00"
        still.appleContentIdentifier = identifier
        try jpegWithExif(at: "\(folder)/\(stem).JPG", orientation: 1, exif: still)
        try liveMotion(at: "\(folder)/\(stem).MOV", identifier: identifier, creationDate: "2023-07-14T10:44:01+0200")
    }

    /// A short QuickTime movie like a Live Photo's motion part: Apple's content identifier and creation date
    /// (with its offset) in `mdta` metadata, as an iPhone writes them.
    @discardableResult
    public static func liveMotion(at path: String, identifier: String?, creationDate: String, seconds: Double = 2) throws -> String {
        var arguments = [
            "-f", "lavfi", "-i", "testsrc2=s=320x240:r=30", "-t", String(seconds), "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", "-movflags", "use_metadata_tags",
        ]
        if let identifier { arguments += ["-metadata", "com.apple.quicktime.content.identifier=\(identifier)"] }
        if creationDate.hasSuffix("Z") {
            arguments += ["-metadata", "creation_time=\(creationDate)"]
        } else {
            arguments += ["-metadata", "com.apple.quicktime.creationdate=\(creationDate)"]
        }
        try ExternalTool.ffmpeg(arguments + ["-f", "mov", path])
        return path
    }

    /// An AVCHD-like interlaced H.264 MPEG-TS whose timestamps start after 1 s: every frame's top field is red and
    /// its bottom field blue, so a poster that mixes the fields looks purple.
    @discardableResult
    public static func interlacedCameraClip(at path: String, seconds: Double = 2) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=red:s=320x240:r=25", "-f", "lavfi", "-i", "color=blue:s=320x240:r=25",
            "-filter_complex", "[0][1]interleave,tinterlace=mode=interleave_top,setfield=tff", "-t", String(seconds),
            "-c:v", "libx264", "-preset", "ultrafast", "-flags", "+ildct+ilme", "-x264opts", "tff=1",
            "-output_ts_offset", "1.04", "-f", "mpegts", path,
        ])
        return path
    }

    /// A 10-bit HEVC clip with the BT.2020 matrix and primaries, one flat colour `rgb` ("20C040") written as
    /// signal values, with `transfer` "bt709" (SDR), "arib-std-b67" (HLG, phones) or "smpte2084" (PQ).
    @discardableResult
    public static func bt2020Clip(at path: String, rgb: String, transfer: String = "bt709") throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=c=0x\(rgb):s=320x240:r=30", "-t", "1",
            "-vf", "scale=out_color_matrix=bt2020:out_range=tv,format=yuv420p10le", "-c:v", "libx265", "-preset", "ultrafast",
            "-x265-params", "log-level=error:colorprim=bt2020:colormatrix=bt2020nc:transfer=\(transfer)",
            "-color_primaries", "bt2020", "-colorspace", "bt2020nc", "-color_trc", transfer, path,
        ])
        return path
    }

    /// A phone-like video stored landscape (320x180) with a display matrix turning it to portrait:
    /// shown the right way up, the top half is red and the bottom half blue.
    @discardableResult
    public static func rotatedPhoneVideo(at path: String, seconds: Double = 2) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=c=red:s=180x160:r=30,pad=180:320:0:0:blue",
            "-t", String(seconds), "-vf", "transpose=2", "-c:v", "libx264", "-preset", "ultrafast",
            "-g", "15", "-pix_fmt", "yuv420p", path,
        ])
        // FFmpeg 5.1's CLI no longer writes a rotation; put the phone's matrix in the track header:
        // {a b u, c d v, x y w} = {0 1 0, -1 0 0, height 0 1}, a 90 degree clockwise turn.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        guard let at = bytes.firstRange(of: Array("tkhd".utf8))?.lowerBound else { return path }
        let version = bytes[at + 4]
        let matrixAt = at + 4 + 4 + (version == 1 ? 32 : 20) + 8 + 8
        func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
        let matrix: [UInt32] = [0, 0x0001_0000, 0, 0xFFFF_0000, 0, 0, 180 << 16, 0, 0x4000_0000]
        bytes.replaceSubrange(matrixAt..<(matrixAt + 36), with: matrix.flatMap(be))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A one-second 10-bit video (HEVC Main 10 like a recent phone's, via libx265), `codec` "libx265" or "libx264".
    @discardableResult
    public static func tenBitVideo(at path: String, codec: String = "libx265") throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=s=320x180:r=30", "-t", "1", "-c:v", codec, "-preset", "ultrafast",
            "-pix_fmt", "yuv420p10le", path,
        ])
        return path
    }

    /// A PNG of half-transparent red (alpha 128).
    @discardableResult
    public static func pngWithAlpha(at path: String, width: Int = 300, height: Int = 200) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=c=red@0.5:s=\(width)x\(height),format=rgba", "-frames:v", "1", path,
        ])
        return path
    }

    /// A 16-bit-per-channel RGB PNG.
    @discardableResult
    public static func png16(at path: String, width: Int = 400, height: Int = 300) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "gradients=s=\(width)x\(height),format=rgb48be", "-frames:v", "1", path,
        ])
        return path
    }

    // MARK: - Hostile files

    /// The first half of a real JPEG.
    @discardableResult
    public static func truncatedJPEG(at path: String) throws -> String {
        try jpeg(at: path, width: 640, height: 480)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The first third of an MP4 whose index (moov) is at the end.
    @discardableResult
    public static func truncatedVideo(at path: String) throws -> String {
        try video(at: path)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: path))
        return path
    }

    @discardableResult
    public static func zeroBytes(at path: String) throws -> String {
        try Data().write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Deterministic pseudo-random bytes, to be given a media extension.
    @discardableResult
    public static func garbage(at path: String, count: Int = 64 << 10, seed: UInt64 = 42) throws -> String {
        var state = seed
        let bytes = (0..<count).map { _ -> UInt8 in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A small real JPEG whose frame header claims `width`x`height` (65535x65535: 4 G pixels in a few KB).
    @discardableResult
    public static func absurdDimensionsJPEG(at path: String, width: Int = 65535, height: Int = 65535) throws -> String {
        try jpeg(at: path, width: 64, height: 48)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 2
        while at + 9 < bytes.count {
            let marker = bytes[at + 1]
            if (0xC0...0xC2).contains(marker) {
                bytes[at + 5] = UInt8(height >> 8); bytes[at + 6] = UInt8(height & 0xFF)
                bytes[at + 7] = UInt8(width >> 8); bytes[at + 8] = UInt8(width & 0xFF)
                break
            }
            at += 2 + (Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A PNG signature and IHDR chunk claiming 4294967295x4294967295 pixels: the count overflows 64 bits.
    @discardableResult
    public static func overflowingDimensionsPNG(at path: String) throws -> String {
        var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
        bytes += Array("IHDR".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 8, 2, 0, 0, 0]
        bytes += [0, 0, 0, 0] + Array(repeating: 0, count: 64)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The start of a HEIC file (an ISO-BMFF `ftyp` box with brand `heic`), which FFmpeg 5.1 cannot decode.
    @discardableResult
    public static func heicLike(at path: String) throws -> String {
        var bytes: [UInt8] = [0, 0, 0, 24] + Array("ftypheic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8)
        bytes += [0, 0, 0, 16] + Array("meta".utf8) + [UInt8](repeating: 0, count: 8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    // MARK: - Reading results back

    /// A picture's size and packed RGB24 pixels, decoded with the `ffmpeg` CLI (which applies
    /// no EXIF orientation to stills, and does apply a video's display matrix).
    public static func rgbPixels(of path: String) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let size = String(decoding: try ExternalTool.run([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
            "-of", "csv=p=0", path,
        ]), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        let rgb = try ExternalTool.run([
            "ffmpeg", "-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ])
        return (Int(size[0]) ?? 0, Int(size[1]) ?? 0, [UInt8](rgb))
    }
}

/// EXIF fields a fixture JPEG carries.
public struct ExifFields: Sendable {
    public var orientation = 1
    public var make = "Cairn"
    public var model = "Test Camera 1"
    public var dateTimeOriginal = "2020:02:29 13:14:15"
    /// Degrees; negative is south.
    public var latitude = 48.8584
    /// Degrees; negative is west.
    public var longitude = -2.2945
    /// Written as Apple's MakerNote content identifier (tag 0x11), as an iPhone does for a Live Photo's still.
    public var appleContentIdentifier: String?
    /// Written as Apple's MakerNote burst identifier (tag 0x0B), as an iPhone does in every frame of a burst.
    public var appleBurstIdentifier: String?
    /// `SubSecTimeOriginal`: the fraction of the second, as digits ("250").
    public var subSecTimeOriginal: String?

    public init() {}

    /// A little-endian TIFF block: IFD0 (make, model, orientation, pointers), an EXIF IFD and a GPS IFD.
    public func tiffBytes() -> [UInt8] {
        typealias Entry = (tag: UInt16, type: UInt16, count: UInt32, value: [UInt8])
        func u16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        func ascii(_ s: String) -> [UInt8] { Array(s.utf8) + [0] }
        func dms(_ degrees: Double) -> [UInt8] {
            let d = abs(degrees), whole = floor(d), minutes = floor((d - whole) * 60)
            let seconds = ((d - whole) * 60 - minutes) * 60
            return u32(UInt32(whole)) + u32(1) + u32(UInt32(minutes)) + u32(1) + u32(UInt32(seconds * 1000)) + u32(1000)
        }
        var out: [UInt8] = Array("II".utf8) + u16(42) + u32(8)
        // Lays out an IFD at the current end, values after it; returns nothing, appends to `out`.
        func appendIFD(_ entries: [Entry], next: UInt32 = 0) {
            let start = out.count
            var values: [UInt8] = []
            let valuesStart = start + 2 + entries.count * 12 + 4
            var table: [UInt8] = u16(UInt16(entries.count))
            for entry in entries {
                table += u16(entry.tag) + u16(entry.type) + u32(entry.count)
                if entry.value.count <= 4 {
                    table += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                } else {
                    table += u32(UInt32(valuesStart + values.count))
                    values += entry.value
                    if values.count % 2 == 1 { values.append(0) }
                }
            }
            out += table + u32(next) + values
        }
        // IFD0 size is fixed by its entries, so the EXIF and GPS IFD offsets can be computed in two passes.
        func ifd0(exifAt: UInt32, gpsAt: UInt32) -> [Entry] {
            [
                (0x010F, 2, UInt32(ascii(make).count), ascii(make)),
                (0x0110, 2, UInt32(ascii(model).count), ascii(model)),
                (0x0112, 3, 1, u16(UInt16(orientation))),
                (0x8769, 4, 1, u32(exifAt)),
                (0x8825, 4, 1, u32(gpsAt)),
            ]
        }
        var exifEntries: [Entry] = [(0x9003, 2, 20, ascii(dateTimeOriginal))]
        let appleTags = [(UInt16(0x000B), appleBurstIdentifier), (UInt16(0x0011), appleContentIdentifier)]
            .compactMap { tag, value in value.map { (tag, ascii($0)) } }
        if !appleTags.isEmpty {
            // "Apple iOS\0", version 1, "MM", then a big-endian IFD at 14 whose offsets count from the note's start.
            func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
            func be32(_ v: UInt32) -> [UInt8] { (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
            var table = be16(UInt16(appleTags.count)), values: [UInt8] = []
            let valuesStart = 14 + 2 + appleTags.count * 12 + 4
            for (tag, value) in appleTags {
                table += be16(tag) + be16(2) + be32(UInt32(value.count)) + be32(UInt32(valuesStart + values.count))
                values += value
            }
            let note = Array("Apple iOS".utf8) + [0, 0, 1] + Array("MM".utf8) + table + be32(0) + values
            exifEntries.append((0x927C, 7, UInt32(note.count), note))
        }
        if let fraction = subSecTimeOriginal {  // tags ascend: after the MakerNote
            exifEntries.append((0x9291, 2, UInt32(ascii(fraction).count), ascii(fraction)))
        }
        let gpsEntries: [Entry] = [
            (1, 2, 2, ascii(latitude < 0 ? "S" : "N")), (2, 5, 3, dms(latitude)),
            (3, 2, 2, ascii(longitude < 0 ? "W" : "E")), (4, 5, 3, dms(longitude)),
        ]
        appendIFD(ifd0(exifAt: 0, gpsAt: 0))
        let exifAt = UInt32(out.count)
        appendIFD(exifEntries)
        let gpsAt = UInt32(out.count)
        appendIFD(gpsEntries)
        // Second pass with the real offsets (same sizes, so the layout does not move).
        out = Array("II".utf8) + u16(42) + u32(8)
        appendIFD(ifd0(exifAt: exifAt, gpsAt: gpsAt))
        appendIFD(exifEntries)
        appendIFD(gpsEntries)
        return out
    }
}
