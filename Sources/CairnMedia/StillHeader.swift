import Foundation

/// What the first bytes of a file say: the container, and for JPEG/PNG/TIFF the stored
/// dimensions and EXIF, read without FFmpeg decoding anything.
struct StillHeader: Equatable, Sendable {
    enum Container: String, Sendable {
        case jpeg, png, tiff, heif, webp, gif, bmp, jxl, other

        /// True when the first bytes name a format with a reader of its own, so a file that the decoder its
        /// extension points to refuses can still be read as what it is. Not TIFF: camera RAWs are TIFFs, and
        /// libtiff would render a RAW that LibRaw finds no image in as its postage-stamp first page.
        var namesAnotherReader: Bool { self != .other && self != .tiff }
    }

    var container: Container
    /// The file's first bytes, for magic numbers other readers check.
    var leadingBytes: [UInt8]
    /// The ISO-BMFF major brand ("heic", "avif", "mif1"), for HEIF files.
    var brand: String?
    /// Stored (not displayed) dimensions, when the header gives them.
    var width: Int?
    var height: Int?
    var exif: ExifSummary?
    /// The embedded ICC profile (JPEG APP2 chunks, in order), when there is one.
    var iccProfile: [UInt8]?
    /// True when a JPEG carries an Adobe APP14 marker: its CMYK samples are stored inverted.
    var hasAdobeMarker = false
    /// Frames of an animated PNG (its acTL chunk), when it is one.
    var animationFrames: Int?
    /// The JPEG's start-of-frame marker (0xC0 baseline, 0xC2 progressive, ...), when read.
    var jpegFrameMarker: UInt8?
    /// Bytes a pixel of the JPEG's decoded planes (its components and their sampling: 1.5 at 4:2:0, 3 at 4:4:4, 1
    /// for grey; 7 for CMYK, decoded to RGBA and converted to RGB), when the frame header was read whole.
    var jpegBytesPerPixel: Double?
    /// Where the JPEG's next segment starts when the bytes given ended before its frame header did (megabytes
    /// of XMP can come first): ``readJPEGFrame(from:reader:)`` goes on from there.
    var jpegResumeOffset: Int?

    /// Reads the header of `bytes`, the start of a file (or all of it, read in place: a buffer is not copied).
    init<Bytes: RandomAccessCollection>(bytes: Bytes) where Bytes.Element == UInt8, Bytes.Index == Int {
        container = Self.sniff(bytes)
        leadingBytes = Array(bytes.prefix(16))
        if container == .heif {
            // The major brand, or "avif" when the ftyp box lists it among its compatible brands.
            let boxSize = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
            let ftyp = bytes[8..<min(bytes.count, max(12, min(boxSize, 256)))]
            let brands = stride(from: ftyp.startIndex, to: ftyp.endIndex - 3, by: 4).map {
                String(decoding: bytes[$0..<($0 + 4)], as: UTF8.self)
            }
            brand = brands.contains("avif") || brands.contains("avis") ? "avif" : brands.first
        }
        switch container {
        case .jpeg: readJPEG(bytes)
        case .png: readPNG(bytes)
        case .tiff: exif = ExifReader(tiff: Array(bytes))?.summary()
        default: break
        }
    }

    /// True when dimensions were found in a header complete enough to skip FFmpeg's probing.
    var hasDimensions: Bool { (width ?? 0) > 0 && (height ?? 0) > 0 }

    static func sniff<Bytes: RandomAccessCollection>(_ b: Bytes) -> Container where Bytes.Element == UInt8, Bytes.Index == Int {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + prefix.count && Array(b[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        // Classic TIFF and BigTIFF, either byte order.
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) || starts([0x49, 0x49, 0x2B, 0x00])
            || starts([0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        if starts(Array("GIF8".utf8)) { return .gif }
        if starts(Array("BM".utf8)) { return .bmp }
        // JPEG XL: a bare codestream, or the ISO-BMFF container's signature box.
        if starts([0xFF, 0x0A]) || starts([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if starts(Array("ftyp".utf8), at: 4), b.count >= 12 {
            let brand = String(decoding: b[8..<12], as: UTF8.self)
            if ["heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1", "avif", "avis"].contains(brand) { return .heif }
        }
        return .other
    }

    private mutating func readJPEG<Bytes: RandomAccessCollection>(_ b: Bytes) where Bytes.Element == UInt8, Bytes.Index == Int {
        var at = 2
        var iccChunks: [Int: [UInt8]] = [:]
        defer {
            // Chunks are numbered from 1; a profile with a missing chunk is no profile.
            if !iccChunks.isEmpty, (1...iccChunks.count).allSatisfy({ iccChunks[$0] != nil }) {
                iccProfile = (1...iccChunks.count).flatMap { iccChunks[$0]! }
            }
        }
        defer { if !hasDimensions, at + 4 > b.count || jpegFrameMarker != nil { jpegResumeOffset = at } }
        while at + 4 <= b.count {
            guard b[at] == 0xFF else { return }
            let marker = b[at + 1]
            if marker == 0xFF { at += 1; continue }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return }  // scan data or end: no more headers
            let length = Int(b[at + 2]) << 8 | Int(b[at + 3])
            guard length >= 2 else { return }
            let body = at + 4, end = at + 2 + length
            switch marker {
            case 0xC0...0xCF where marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
                jpegFrameMarker = marker
                if body + 5 <= b.count {
                    height = Int(b[body + 1]) << 8 | Int(b[body + 2])
                    width = Int(b[body + 3]) << 8 | Int(b[body + 4])
                }
                if body + 6 <= b.count {
                    let count = Int(b[body + 5])
                    if body + 6 + 3 * count <= b.count { readJPEGComponents(Array(b[(body + 5)..<(body + 6 + 3 * count)])) }
                }
                return
            case 0xE1 where exif == nil && end <= b.count && length >= 8
                && Array(b[body..<(body + 6)]) == [0x45, 0x78, 0x69, 0x66, 0, 0]:
                exif = ExifReader(tiff: Array(b[(body + 6)..<end]))?.summary()
            case 0xE2 where end <= b.count && length >= 16
                && Array(b[body..<(body + 12)]) == Array("ICC_PROFILE".utf8) + [0]:
                iccChunks[Int(b[body + 12])] = Array(b[(body + 14)..<end])
            case 0xEE where end <= b.count && length >= 7 && Array(b[body..<(body + 5)]) == Array("Adobe".utf8):
                hasAdobeMarker = true
            default:
                break
            }
            at = end
        }
    }

    /// Walks the JPEG's segment headers in the file from `offset`, four bytes each and skipping their bodies, to
    /// its frame header, and takes the picture's size from it. Segments before it that the window missed (EXIF,
    /// ICC) are not read: the decoder reads the whole file.
    mutating func readJPEGFrame(from offset: Int, reader: FileReader) throws(MediaError) {
        var at = offset
        for _ in 0..<65_536 {
            let head = try reader.bytes(at: at, count: 4)
            guard head.count == 4, head[0] == 0xFF else { return }
            let marker = head[1]
            if marker == 0xFF { at += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { at += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return }
            let length = Int(head[2]) << 8 | Int(head[3])
            guard length >= 2 else { return }
            if (0xC0...0xCF).contains(marker), marker != 0xC4, marker != 0xC8, marker != 0xCC {
                let frame = try reader.bytes(at: at + 4, count: 6 + 3 * 4)
                guard frame.count >= 6 else { return }
                jpegFrameMarker = marker
                height = Int(frame[1]) << 8 | Int(frame[2])
                width = Int(frame[3]) << 8 | Int(frame[4])
                let count = Int(frame[5])
                if 6 + 3 * count <= frame.count { readJPEGComponents(Array(frame[5..<(6 + 3 * count)])) }
                jpegResumeOffset = nil
                return
            }
            at += 2 + length
        }
    }

    /// The frame header's component count and each component's sampling factors: what the decoded planes hold.
    private mutating func readJPEGComponents(_ fields: [UInt8]) {
        let count = Int(fields[0])
        guard count >= 1, fields.count >= 1 + 3 * count else { return }
        switch count {
        case 1: jpegBytesPerPixel = 1
        case 3:
            // Each chroma plane is the luma's size over its sampling ratio.
            let factors = (0..<3).map { Int(fields[2 + 3 * $0] >> 4) * Int(fields[2 + 3 * $0] & 0x0F) }
            guard factors.allSatisfy({ $0 > 0 }) else { return }
            jpegBytesPerPixel = 1 + Double(factors[1] + factors[2]) / Double(factors[0])
        default: jpegBytesPerPixel = 7
        }
    }

    /// A progressive JPEG: decoded from coefficients held for the whole picture.
    var isProgressiveJPEG: Bool { jpegFrameMarker.map { [0xC2, 0xC6, 0xCA, 0xCE].contains($0) } ?? false }

    private mutating func readPNG<Bytes: RandomAccessCollection>(_ b: Bytes) where Bytes.Element == UInt8, Bytes.Index == Int {
        // IHDR is always the first chunk: length(4) "IHDR" width(4) height(4).
        guard b.count >= 24, Array(b[12..<16]) == Array("IHDR".utf8) else { return }
        func u32(_ at: Int) -> Int { Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3]) }
        width = u32(16)
        height = u32(20)
        // Chunks before the image data: eXIf carries EXIF (orientation, date), acTL makes the PNG an animation.
        var at = 8
        while at + 12 <= b.count {
            let length = u32(at)
            let type = String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self)
            if type == "IDAT" || length > b.count { break }
            let end = at + 8 + length
            if type == "eXIf", end <= b.count { exif = ExifReader(tiff: Array(b[(at + 8)..<end]))?.summary() }
            if type == "acTL", length >= 8, at + 16 <= b.count { animationFrames = u32(at + 8) }
            at = end + 4
        }
    }
}
