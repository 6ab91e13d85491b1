import CFFmpeg
import CPixbuf

// gdk-pixbuf calls live here and nowhere else. It is the last resort for stills FFmpeg's decoders refuse:
// BMPs with V4/V5 bit-field headers or odd plane counts, a PNG with an empty iCCP chunk, GIF frames that
// reach outside their screen. Only for those containers: on files of no known container its sniffing can
// take seconds (a gdk-pixbuf regression file took 9 s).

/// A decoded `GdkPixbuf`, unreferenced in deinit; frames borrow its pixels.
final class Pixbuf {
    let pointer: UnsafeMutableRawPointer

    init(path: String, call: FFmpegCall) throws(MediaError) {
        var reason = [CChar](repeating: 0, count: 512)
        guard let loaded = CPixbuf_load(path, &reason, reason.count) else {
            throw call.failure("gdk_pixbuf_new_from_file", String(cString: reason), .corrupt)
        }
        pointer = loaded
    }

    deinit { CPixbuf_release(pointer) }
}

struct PixbufDecoder {
    let configuration: MediaConfiguration

    static func covers(_ container: StillHeader.Container) -> Bool { [.bmp, .png, .gif].contains(container) }

    /// Size and format from the header alone; nil when gdk-pixbuf knows no such format.
    func probe(path: String, call: FFmpegCall) throws(MediaError) -> MediaProbe? {
        guard let info = Self.info(path: path) else { return nil }
        try call.checkPixels(info.width, info.height, cap: configuration.maxPixels, operation: "probe")
        return MediaProbe(container: info.format, kind: .photo,
                          streams: [.init(index: 0, type: "video", codec: info.format, width: info.width, height: info.height)],
                          width: info.width, height: info.height)
    }

    /// The (first) picture as 8-bit RGB or RGBA; its size is checked against the cap before anything is decoded.
    func decode(path: String, orientation: Orientation, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        guard let info = Self.info(path: path) else {
            throw call.failure("gdk_pixbuf_get_file_info", "a format gdk-pixbuf does not know", .unsupported)
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

    private static func info(path: String) -> (width: Int, height: Int, format: String)? {
        var width: Int32 = 0, height: Int32 = 0
        var format = [CChar](repeating: 0, count: 64)
        guard CPixbuf_file_info(path, &width, &height, &format, format.count) != 0, width > 0, height > 0 else { return nil }
        return (Int(width), Int(height), String(cString: format))
    }
}
