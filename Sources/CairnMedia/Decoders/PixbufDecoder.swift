import CFFmpeg
import CPixbuf

// gdk-pixbuf calls live here and nowhere else. It is the last resort for stills FFmpeg's decoders refuse:
// BMPs with V4/V5 bit-field headers or odd plane counts, a PNG with an empty iCCP chunk, GIF frames that
// reach outside their screen. Only for those containers: on files of no known container its sniffing can
// take seconds (a gdk-pixbuf regression file did).

/// A decoded `GdkPixbuf`, unreferenced in deinit; frames borrow its pixels.
final class Pixbuf {
    let pointer: UnsafeMutableRawPointer

    init(path: String, call: FFmpegCall) throws(MediaError) {
        var reason = [CChar](repeating: 0, count: 512)
        guard let loaded = CPixbuf_load(path, &reason, reason.count) else {
            throw call.failure("gdk_pixbuf_new_from_file", Self.text(reason), .corrupt)
        }
        pointer = loaded
    }

    /// A C buffer's text up to its terminating zero.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { CPixbuf_release(pointer) }
}

struct PixbufDecoder {
    let configuration: MediaConfiguration

    static func covers(_ container: StillHeader.Container) -> Bool { [.bmp, .png, .gif].contains(container) }

    /// Size and format from the header alone; nil when gdk-pixbuf knows no such format.
    func probe(path: String, call: FFmpegCall) throws(MediaError) -> MediaProbe? {
        guard Self.plausible(path: path, cap: configuration.maxPixels), let info = Self.info(path: path) else { return nil }
        try call.checkPixels(info.width, info.height, cap: configuration.maxPixels, operation: "probe")
        return MediaProbe(container: info.format, kind: .photo,
                          streams: [.init(index: 0, type: "video", codec: info.format, width: info.width, height: info.height)],
                          width: info.width, height: info.height)
    }

    /// The (first) picture as 8-bit RGB or RGBA; its size is checked against the cap before anything is decoded.
    func decode(path: String, orientation: Orientation, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        guard Self.plausible(path: path, cap: configuration.maxPixels), let info = Self.info(path: path) else {
            throw call.failure("gdk_pixbuf_get_file_info", "a header gdk-pixbuf is not given (unknown or implausible)", .unsupported)
        }
        try call.checkPixels(info.width, info.height, cap: configuration.maxPixels, operation: "decode")
        let pixbuf = try Pixbuf(path: path, call: call)
        let channels = Int(CPixbuf_channels(pixbuf.pointer))
        guard CPixbuf_bits(pixbuf.pointer) == 8, channels == 3 || channels == 4,
              let pixels = CPixbuf_pixels(pixbuf.pointer) else {
            throw call.failure("gdk_pixbuf_new_from_file", "an image layout gdk-pixbuf gives that cairn cannot read", .unsupported)
        }
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = CPixbuf_width(pixbuf.pointer)
        frame.pointer.pointee.height = CPixbuf_height(pixbuf.pointer)
        frame.pointer.pointee.format = (channels == 4 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24).rawValue
        CFFmpeg_frame_borrow_plane(frame.pointer, 0, UnsafeMutablePointer(mutating: pixels), CPixbuf_stride(pixbuf.pointer))
        return DecodedPicture(frame: frame, orientation: orientation, file: path, owner: pixbuf)
    }

    /// Whether the header is sane enough to hand to gdk-pixbuf, which trusts it: BMPs of 118 and 235 bytes found
    /// by fuzzing declare a 4 GB header or 700 million palette colours, and its loader reallocates that much.
    /// BMP: a known header size, pixels starting inside the file, a palette of at most 256 colours (65,536 above
    /// 8 bits); every format: dimensions within the pixel cap.
    static func plausible(path: String, cap: Int) -> Bool {
        let call = FFmpegCall(file: path)
        guard let head = try? FileIO.prefix(path, limit: 64, call: call), head.count >= 26,
              let size = try? FileIO.size(of: path, call: call) else { return false }
        func le16(_ at: Int) -> Int { Int(head[at]) | Int(head[at + 1]) << 8 }
        func le32(_ at: Int) -> Int32 { Int32(bitPattern: UInt32(le16(at)) | UInt32(le16(at + 2)) << 16) }
        func be32(_ at: Int) -> Int { Int(head[at]) << 24 | Int(head[at + 1]) << 16 | Int(head[at + 2]) << 8 | Int(head[at + 3]) }
        let width: Int, height: Int
        switch StillHeader.sniff(head) {
        case .bmp:
            let headerSize = Int(le32(14))
            guard [12, 40, 52, 56, 64, 108, 124].contains(headerSize) else { return false }
            let pixelsAt = Int(le32(10))
            guard pixelsAt >= 14 + headerSize, pixelsAt <= size else { return false }
            if headerSize >= 40 {
                guard head.count >= 50 else { return false }
                let colours = Int(le32(46)), bits = le16(28)
                guard colours >= 0, colours <= (bits <= 8 ? 256 : 65_536) else { return false }
            }
            if headerSize == 12 {
                (width, height) = (le16(18), le16(20))
            } else {
                (width, height) = (Int(le32(18)), abs(Int(le32(22))))
            }
        case .png: (width, height) = (be32(16), be32(20))
        case .gif: (width, height) = (le16(6), le16(8))
        default: return false
        }
        guard width > 0, height > 0 else { return false }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        return !overflow && pixels <= cap
    }

    private static func info(path: String) -> (width: Int, height: Int, format: String)? {
        var width: Int32 = 0, height: Int32 = 0
        var format = [CChar](repeating: 0, count: 64)
        guard CPixbuf_file_info(path, &width, &height, &format, format.count) != 0, width > 0, height > 0 else { return nil }
        return (Int(width), Int(height), Pixbuf.text(format))
    }
}
