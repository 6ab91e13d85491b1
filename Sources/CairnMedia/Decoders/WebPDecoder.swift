import CFFmpeg
import CWebP

// libwebp calls live here and in WebPEncoder.swift. FFmpeg 5.1 reads still WebP but not animated WebP.

/// A libwebp animation decoder (`WebPAnimDecoder`), freed in deinit; it owns the canvas it returns.
final class WebPAnimation {
    let pointer: OpaquePointer
    let width: Int
    let height: Int
    let frameCount: Int

    /// Nil when libwebp cannot parse the bytes as an animation.
    init?(_ bytes: UnsafePointer<UInt8>, count: Int) {
        var options = WebPAnimDecoderOptions()
        guard CWebP_AnimDecoderOptionsInit(&options) != 0 else { return nil }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var data = WebPData(bytes: bytes, size: count)
        guard let decoder = CWebP_AnimDecoderNew(&data, &options) else { return nil }
        pointer = decoder
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else {
            WebPAnimDecoderDelete(decoder)
            return nil
        }
        width = Int(info.canvas_width)
        height = Int(info.canvas_height)
        frameCount = Int(info.frame_count)
    }

    deinit { WebPAnimDecoderDelete(pointer) }

    /// The first frame composed on the canvas, RGBA; the buffer belongs to this decoder.
    func firstFrame() -> UnsafeMutablePointer<UInt8>? {
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(pointer, &buffer, &timestamp) != 0 else { return nil }
        return buffer
    }
}

struct WebPDecoder {
    let configuration: MediaConfiguration

    /// Whether the bitstream is an animation, from its header alone.
    static func isAnimated(_ bytes: UnsafePointer<UInt8>, count: Int) -> Bool {
        var features = WebPBitstreamFeatures()
        return CWebP_GetFeatures(bytes, count, &features) != 0 && features.has_animation != 0
    }

    /// Size and frame count of an animated WebP, nil for a still one (FFmpeg reads those).
    func probeAnimated(_ bytes: UnsafePointer<UInt8>, count: Int, call: FFmpegCall) throws(MediaError) -> MediaProbe? {
        guard Self.isAnimated(bytes, count: count) else { return nil }
        guard let animation = WebPAnimation(bytes, count: count) else {
            throw call.failure("WebPAnimDecoderNew", "animated WebP that libwebp cannot parse", .corrupt)
        }
        try call.checkPixels(animation.width, animation.height, cap: configuration.maxPixels, operation: "probe")
        return MediaProbe(container: "webp", kind: .photo,
                          streams: [.init(index: 0, type: "video", codec: "webp", width: animation.width, height: animation.height)],
                          width: animation.width, height: animation.height, animated: true, frameCount: animation.frameCount)
    }

    /// The first frame of an animated WebP; nil for a still one.
    func decodeAnimated(_ bytes: UnsafePointer<UInt8>, count: Int, call: FFmpegCall) throws(MediaError) -> DecodedPicture? {
        guard Self.isAnimated(bytes, count: count) else { return nil }
        guard let animation = WebPAnimation(bytes, count: count) else {
            throw call.failure("WebPAnimDecoderNew", "animated WebP that libwebp cannot parse", .corrupt)
        }
        try call.checkPixels(animation.width, animation.height, cap: configuration.maxPixels, operation: "decode")
        guard let canvas = animation.firstFrame() else {
            throw call.failure("WebPAnimDecoderGetNext", "animated WebP whose first frame does not decode", .corrupt)
        }
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = Int32(animation.width)
        frame.pointer.pointee.height = Int32(animation.height)
        frame.pointer.pointee.format = AV_PIX_FMT_RGBA.rawValue
        CFFmpeg_frame_borrow_plane(frame.pointer, 0, canvas, Int32(animation.width * 4))
        return DecodedPicture(frame: frame, orientation: .identity, file: call.file, owner: animation)
    }
}
