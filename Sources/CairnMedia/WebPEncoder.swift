import CFFmpeg
import CWebP

/// Encodes a YUV 4:2:0 frame (video range, which is what VP8 codes) as a lossy WebP file, with libwebp itself.
///
/// Why not FFmpeg's libwebp encoder: it cannot set segments, and a thumbnail is best encoded as one
/// (`MediaConfiguration.webpSegments`). It also opened a codec context for every picture.
struct WebPEncoder {
    let quality: Int
    let method: Int
    let segments: Int

    /// The whole file's bytes.
    func encode(_ frame: Frame, call: FFmpegCall) throws(MediaError) -> [UInt8] {
        guard frame.format == AV_PIX_FMT_YUV420P, let y = frame.plane(0), let u = frame.plane(1), let v = frame.plane(2),
              frame.linesize(1) == frame.linesize(2)
        else {
            throw call.failure("WebPEncode", "not a YUV 4:2:0 frame (\(Scaler.name(frame.format)))", .engine)
        }
        var config = WebPConfig()
        guard CWebP_ConfigInit(&config) != 0 else {
            throw call.failure("WebPConfigInit", "libwebp's version does not match its headers", .engine)
        }
        config.quality = Float(quality)
        config.method = Int32(method)
        config.segments = Int32(segments)
        guard WebPValidateConfig(&config) != 0 else {
            throw call.failure("WebPValidateConfig", "quality \(quality), effort \(method), \(segments) segments", .engine)
        }
        var picture = WebPPicture()
        guard CWebP_PictureInit(&picture) != 0 else {
            throw call.failure("WebPPictureInit", "libwebp's version does not match its headers", .engine)
        }
        // The planes stay the frame's: libwebp reads them and frees only what it allocated itself.
        defer { WebPPictureFree(&picture) }
        picture.use_argb = 0
        picture.colorspace = WEBP_YUV420
        picture.width = Int32(frame.width)
        picture.height = Int32(frame.height)
        picture.y = y
        picture.u = u
        picture.v = v
        picture.y_stride = Int32(frame.linesize(0))
        picture.uv_stride = Int32(frame.linesize(1))
        let output = UnsafeMutablePointer<WebPMemoryWriter>.allocate(capacity: 1)
        WebPMemoryWriterInit(output)
        defer {
            WebPMemoryWriterClear(output)
            output.deallocate()
        }
        picture.writer = WebPMemoryWrite
        picture.custom_ptr = UnsafeMutableRawPointer(output)
        guard WebPEncode(&config, &picture) != 0 else {
            throw call.failure("WebPEncode", "libwebp error \(picture.error_code.rawValue)", .engine)
        }
        guard let bytes = output.pointee.mem, output.pointee.size > 0 else {
            throw call.failure("WebPEncode", "libwebp produced no bytes", .engine)
        }
        return Array(UnsafeBufferPointer(start: bytes, count: output.pointee.size))
    }
}
