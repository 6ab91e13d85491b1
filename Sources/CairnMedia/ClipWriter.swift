import CFFmpeg

/// A file being written in `format` (`AVFormatContext` for output plus, once opened, its `AVIOContext`): an MP4, or
/// an HLS playlist, whose muxer opens and closes its own files (init, segments, playlist).
final class FormatOutput {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    let call: FFmpegCall

    init(path: String, format: String = "mp4", call: FFmpegCall) throws(MediaError) {
        self.call = call
        var context: UnsafeMutablePointer<AVFormatContext>? = nil
        try call.check(avformat_alloc_output_context2(&context, nil, format, path), "avformat_alloc_output_context2")
        pointer = try call.require(context, "avformat_alloc_output_context2")
    }

    func open(path: String) throws(MediaError) {
        try call.check(avio_open(&pointer.pointee.pb, path, CFFmpeg_AVIO_FLAG_WRITE()), "avio_open")
    }

    /// Closes the file, flushing what is buffered; a failure here means the clip is not complete.
    func close() throws(MediaError) {
        guard pointer.pointee.pb != nil else { return }
        try call.check(avio_closep(&pointer.pointee.pb), "avio_closep")
    }

    deinit {
        if pointer.pointee.pb != nil { avio_closep(&pointer.pointee.pb) }
        avformat_free_context(pointer)
    }
}

/// Writes a still as a short MP4: the picture is scaled once and the encoder is fed the same frame
/// again and again (nearly free to code), or, with Ken Burns, crops of one master that zoom slowly.
struct ClipWriter {
    /// Ken Burns zooms in to 1/endZoom of the picture over the clip.
    static let kenBurnsEndZoom = 1.15

    static var preferredEncoder: String {
        avcodec_find_encoder_by_name("libx264") != nil ? "libx264" : "mpeg4"
    }

    /// x264's frame threads (0: x264's choice).
    var threads = 0

    func write(_ picture: DecodedPicture, options: ClipOptions, to path: String) throws(MediaError) -> (width: Int, height: Int, codec: String) {
        let call = FFmpegCall(file: picture.file)
        guard options.framesPerSecond > 0, options.seconds > 0 else {
            throw call.failure("synthesize", "clip needs a positive duration and frame rate", .engine)
        }
        let renderer = PictureRenderer(picture)
        let displayed = picture.displayedSize
        let size = SizePlanning.clipSize(width: displayed.width, height: displayed.height,
                                         maxLongSide: options.maxLongSide, maxShortSide: options.maxShortSide)
        let flags = CFFmpeg_SWS_BICUBIC()

        // One master frame, oriented; Ken Burns keeps headroom to crop into.
        let headroom = options.kenBurns ? Self.kenBurnsEndZoom : 1
        let masterWidth = Int((Double(size.width) * headroom).rounded()) & ~1
        let masterHeight = Int((Double(size.height) * headroom).rounded()) & ~1
        let stored = picture.orientation.swapsDimensions ? (masterHeight, masterWidth) : (masterWidth, masterHeight)
        let master = try renderer.render(storedWidth: stored.0, storedHeight: stored.1, format: AV_PIX_FMT_YUV420P, flags: flags)

        let output = try FormatOutput(path: path, call: call)
        let encoderName = Self.preferredEncoder
        guard let codec = avcodec_find_encoder_by_name(encoderName) else {
            throw call.failure("avcodec_find_encoder_by_name", "no \(encoderName) encoder", .engine)
        }
        let encoder = try CodecContext(codec: codec, call: call)
        defer { withExtendedLifetime(encoder) {} }  // `context` is borrowed from it
        let context = encoder.pointer
        context.pointee.width = Int32(size.width)
        context.pointee.height = Int32(size.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.time_base = AVRational(num: 1, den: Int32(options.framesPerSecond))
        context.pointee.framerate = AVRational(num: Int32(options.framesPerSecond), den: 1)
        context.pointee.gop_size = Int32(options.framesPerSecond * 2)
        context.pointee.thread_count = Int32(threads)
        context.pointee.color_range = AVCOL_RANGE_MPEG
        if (output.pointer.pointee.oformat.pointee.flags & CFFmpeg_AVFMT_GLOBALHEADER()) != 0 {
            context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER()
        }
        var encoderOptions: [String: String] = [:]
        if encoderName == "libx264" {
            // A still's clip has nothing for rate control to look ahead for: a short lookahead, not in a thread of
            // its own, holds less memory and encodes no slower (`MemoryEstimate`).
            encoderOptions = ["preset": "veryfast", "crf": "20", "tune": "stillimage",
                              "x264-params": "rc-lookahead=3:sync-lookahead=0"]
        } else {
            context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_QSCALE()
            context.pointee.global_quality = 3 * CFFmpeg_FF_QP2LAMBDA()
        }
        try encoder.open(options: encoderOptions)

        let stream = try call.require(avformat_new_stream(output.pointer, nil), "avformat_new_stream")
        try call.check(avcodec_parameters_from_context(stream.pointee.codecpar, context), "avcodec_parameters_from_context")
        stream.pointee.time_base = context.pointee.time_base
        stream.pointee.avg_frame_rate = context.pointee.framerate
        try output.open(path: path)
        var muxerOptions: OpaquePointer? = nil
        defer { av_dict_free(&muxerOptions) }
        try call.check(av_dict_set(&muxerOptions, "movflags", "+faststart", 0), "av_dict_set")
        try call.check(avformat_write_header(output.pointer, &muxerOptions), "avformat_write_header")

        let count = options.frameCount
        try withPacket(call) { (packet) throws(MediaError) in
            func drain() throws(MediaError) {
                while true {
                    let rc = avcodec_receive_packet(context, packet)
                    if rc == CFFmpeg_AVERROR_EAGAIN() || rc == CFFmpeg_AVERROR_EOF() { return }
                    try call.check(rc, "avcodec_receive_packet")
                    av_packet_rescale_ts(packet, context.pointee.time_base, stream.pointee.time_base)
                    packet.pointee.stream_index = stream.pointee.index
                    try call.check(av_interleaved_write_frame(output.pointer, packet), "av_interleaved_write_frame")
                }
            }
            for index in 0..<count {
                try call.checkInterrupt()
                let frame: Frame
                if options.kenBurns {
                    frame = try Self.kenBurnsFrame(master, index: index, count: count, width: size.width,
                                                   height: size.height, flags: flags, call: call)
                } else {
                    frame = master
                }
                frame.pointer.pointee.pts = Int64(index)
                try call.check(avcodec_send_frame(context, frame.pointer), "avcodec_send_frame")
                try drain()
            }
            try call.check(avcodec_send_frame(context, nil), "avcodec_send_frame")
            try drain()
        }
        try call.check(av_write_trailer(output.pointer), "av_write_trailer")
        try output.close()
        return (size.width, size.height, encoderName == "libx264" ? "h264" : "mpeg4")
    }

    /// Frame `index` of `count` of the slow zoom: a centred crop of `master`, scaled to `width`x`height` (a
    /// synthesized clip's size, or a tape clip's picture region).
    static func kenBurnsFrame(_ master: Frame, index: Int, count: Int, width: Int, height: Int,
                              flags: Int32, call: FFmpegCall) throws(MediaError) -> Frame {
        let crop = SizePlanning.kenBurnsCrop(width: master.width, height: master.height, index: index, count: count,
                                             endZoom: kenBurnsEndZoom)
        let view = try Frame(call: call)
        try call.check(av_frame_ref(view.pointer, master.pointer), "av_frame_ref")
        view.pointer.pointee.crop_left = crop.x
        view.pointer.pointee.crop_top = crop.y
        view.pointer.pointee.crop_right = master.width - crop.x - crop.width
        view.pointer.pointee.crop_bottom = master.height - crop.y - crop.height
        try call.check(av_frame_apply_cropping(view.pointer, CFFmpeg_AV_FRAME_CROP_UNALIGNED()), "av_frame_apply_cropping")
        let frame = try Frame(width: width, height: height, format: AV_PIX_FMT_YUV420P, call: call)
        try Scaler(from: view, width: width, height: height, format: AV_PIX_FMT_YUV420P, flags: flags, call: call)
            .scale(view, into: frame, call: call)
        return frame
    }
}
