import CFFmpeg

/// The file format of a still derivative.
public enum ImageFormat: String, Codable, Sendable {
    case webp
    case jpeg

    public var fileExtension: String { self == .webp ? "webp" : "jpg" }

    /// WebP, through libwebp (linked, so always there).
    public static let preferredThumbnailFormat: ImageFormat = .webp

    /// The pixel format the encoder takes: full-range for JPEG, video-range for WebP.
    var pixelFormat: AVPixelFormat { self == .webp ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_YUVJ420P }
}

/// Encodes one frame into a complete image file: WebP with libwebp (`WebPEncoder`), JPEG with FFmpeg's mjpeg.
struct ImageEncoder {
    let configuration: MediaConfiguration

    /// Writes `frame` as `format` to `path`; returns the number of bytes written.
    func write(_ frame: Frame, as format: ImageFormat, to path: String, call: FFmpegCall) throws(MediaError) -> Int {
        if format == .webp {
            let bytes = try WebPEncoder(quality: configuration.webpQuality, method: configuration.webpMethod,
                                        segments: configuration.webpSegments).encode(frame, call: call)
            try FileIO.write(bytes, to: path, call: call)
            return bytes.count
        }
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG) else {
            throw call.failure("avcodec_find_encoder", "no jpeg encoder in this FFmpeg", .engine)
        }
        let encoder = try CodecContext(codec: codec, call: call)
        defer { withExtendedLifetime(encoder) {} }  // `context` is borrowed from it
        let context = encoder.pointer
        context.pointee.width = frame.pointer.pointee.width
        context.pointee.height = frame.pointer.pointee.height
        context.pointee.pix_fmt = format.pixelFormat
        context.pointee.time_base = AVRational(num: 1, den: 25)
        context.pointee.color_range = AVCOL_RANGE_JPEG
        context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_QSCALE()
        context.pointee.global_quality = Int32(configuration.jpegQScale) * CFFmpeg_FF_QP2LAMBDA()
        frame.pointer.pointee.quality = context.pointee.global_quality
        try encoder.open(options: [:])
        frame.pointer.pointee.pts = 0
        try call.check(avcodec_send_frame(context, frame.pointer), "avcodec_send_frame")
        try call.check(avcodec_send_frame(context, nil), "avcodec_send_frame")
        var bytes: [UInt8] = []
        try withPacket(call) { (packet) throws(MediaError) in
            while true {
                let rc = avcodec_receive_packet(context, packet)
                if rc == CFFmpeg_AVERROR_EOF() { break }
                try call.check(rc, "avcodec_receive_packet")
                bytes.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
                av_packet_unref(packet)
            }
        }
        guard !bytes.isEmpty else { throw call.failure("encode", "\(format.rawValue) encoder produced no bytes", .engine) }
        try FileIO.write(bytes, to: path, call: call)
        return bytes.count
    }
}
