import CairnCore
import CFFmpeg

// C handles, each owned by a final class that frees it in deinit. None of these types is public.

/// Quiets FFmpeg's own logging once per process; errors reach callers as ``MediaError`` instead.
let quietFFmpegLogging: Void = { av_log_set_level(CFFmpeg_AV_LOG_QUIET()) }()

/// An opened demuxer (`AVFormatContext`).
final class FormatInput {
    let pointer: UnsafeMutablePointer<AVFormatContext>
    let call: FFmpegCall

    /// Opens `path` with bounded probing; FFmpeg reads at most `probeBytes` to guess the format.
    init(path: String, probeBytes: Int, analyzeMicroseconds: Int, call: FFmpegCall) throws(MediaError) {
        _ = quietFFmpegLogging
        self.call = call
        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        try call.check(av_dict_set(&options, "probesize", String(probeBytes), 0), "av_dict_set")
        try call.check(av_dict_set(&options, "analyzeduration", String(analyzeMicroseconds), 0), "av_dict_set")
        try call.check(av_dict_set(&options, "formatprobesize", String(min(probeBytes, 1 << 20)), 0), "av_dict_set")
        // FFmpeg asks the interrupt callback while it waits on I/O (open, probing, reads).
        var context: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        context?.pointee.interrupt_callback = AVIOInterruptCB(callback: ffmpegInterruptCallback, opaque: nil)
        try call.check(avformat_open_input(&context, path, nil, &options), "avformat_open_input")
        pointer = try call.require(context, "avformat_open_input")
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = pointer
        avformat_close_input(&context)
    }

    var streamCount: Int { Int(pointer.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { pointer.pointee.streams[index]! }

    var formatName: String {
        guard let name = pointer.pointee.iformat?.pointee.name else { return "unknown" }
        return String(cString: name)
    }

    /// True when every stream already has what a probe needs, so `avformat_find_stream_info`
    /// (which decodes frames) can be skipped.
    var parametersComplete: Bool {
        guard streamCount > 0 else { return false }
        for index in 0..<streamCount {
            let parameters = stream(index).pointee.codecpar.pointee
            if parameters.codec_id == AV_CODEC_ID_NONE { return false }
            switch parameters.codec_type {
            case AVMEDIA_TYPE_VIDEO where parameters.width <= 0 || parameters.height <= 0: return false
            case AVMEDIA_TYPE_AUDIO where parameters.sample_rate <= 0: return false
            default: continue
            }
        }
        return true
    }

    func findStreamInfo() throws(MediaError) {
        try call.check(avformat_find_stream_info(pointer, nil), "avformat_find_stream_info")
    }
}

/// A codec context (`AVCodecContext`), for decoding or encoding.
final class CodecContext {
    let pointer: UnsafeMutablePointer<AVCodecContext>
    let codec: UnsafePointer<AVCodec>
    let call: FFmpegCall

    init(codec: UnsafePointer<AVCodec>, call: FFmpegCall) throws(MediaError) {
        self.codec = codec
        self.call = call
        pointer = try call.require(avcodec_alloc_context3(codec), "avcodec_alloc_context3")
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = pointer
        avcodec_free_context(&context)
    }

    /// Opens the codec, passing private options (e.g. `quality`, `preset`) by name.
    func open(options: [String: String] = [:]) throws(MediaError) {
        var dictionary: OpaquePointer? = nil
        defer { av_dict_free(&dictionary) }
        for (key, value) in options { try call.check(av_dict_set(&dictionary, key, value, 0), "av_dict_set") }
        try call.check(avcodec_open2(pointer, codec, &dictionary), "avcodec_open2")
    }

    var name: String { String(cString: codec.pointee.name) }
}

/// A frame (`AVFrame`) that outlives a scope: a decoded picture, a scaled derivative.
final class Frame {
    let pointer: UnsafeMutablePointer<AVFrame>

    init(call: FFmpegCall) throws(MediaError) {
        pointer = try call.require(av_frame_alloc(), "av_frame_alloc")
    }

    /// A frame with its own buffers for `width`x`height` pixels of `format`.
    convenience init(width: Int, height: Int, format: AVPixelFormat, call: FFmpegCall) throws(MediaError) {
        try self.init(call: call)
        pointer.pointee.width = Int32(width)
        pointer.pointee.height = Int32(height)
        pointer.pointee.format = format.rawValue
        try call.check(av_frame_get_buffer(pointer, 0), "av_frame_get_buffer")
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    var width: Int { Int(pointer.pointee.width) }
    var height: Int { Int(pointer.pointee.height) }
    var format: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }
    func plane(_ index: Int) -> UnsafeMutablePointer<UInt8>? { CFFmpeg_frame_plane(pointer, Int32(index)) }
    func linesize(_ index: Int) -> Int { Int(CFFmpeg_frame_linesize(pointer, Int32(index))) }
}

/// A whole file read into memory, padded as FFmpeg's decoders require, in a reference-counted buffer that a
/// packet can share without a copy. Only libavutil: a still that libjpeg-turbo decodes never loads libavcodec.
final class WholeFile {
    private var buffer: UnsafeMutablePointer<AVBufferRef>?
    let data: UnsafeMutablePointer<UInt8>
    /// The bytes read into `data`.
    private(set) var count = 0

    init(path: String, size: Int, call: FFmpegCall) throws(MediaError) {
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        let memory = try call.require(av_malloc(size + padding), "av_malloc").assumingMemoryBound(to: UInt8.self)
        (memory + size).initialize(repeating: 0, count: padding)
        guard let buffer = av_buffer_create(memory, size + padding, av_buffer_default_free, nil, 0) else {
            av_free(memory)
            throw call.failure("av_buffer_create", "out of memory", .io)
        }
        self.buffer = buffer
        data = memory
        // Fully initialised from here: if this throws, deinit frees the buffer.
        count = try FileIO.read(path, into: memory, count: size, call: call)
    }

    deinit { av_buffer_unref(&buffer) }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: data, count: count) }

    /// A packet of the whole file, sharing its buffer.
    func packet(call: FFmpegCall) throws(MediaError) -> SharedPacket {
        let packet = SharedPacket(try call.require(av_packet_alloc(), "av_packet_alloc"))
        packet.pointer.pointee.buf = try call.require(av_buffer_ref(buffer), "av_buffer_ref")
        packet.pointer.pointee.data = data
        packet.pointer.pointee.size = Int32(count)
        return packet
    }
}

/// A packet that holds a reference to another owner's buffer; freeing it drops that reference.
final class SharedPacket {
    let pointer: UnsafeMutablePointer<AVPacket>

    init(_ pointer: UnsafeMutablePointer<AVPacket>) { self.pointer = pointer }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }
}

/// Scalers no picture uses, by everything they were made for, the most recently used kept. Making a scaler
/// computes its filters (a sine per tap and phase): for a small picture that cost more than the scaling, and the
/// photos of one camera, or one folder, mostly share their size.
final class ScalerCache: Sendable {
    struct Key: Hashable, Sendable {
        var sourceWidth, sourceHeight, sourceFormat: Int32
        /// The source's range and YCbCr matrix, which `Scaler` sets on a new context.
        var sourceRange, sourceSpace: UInt32
        var width, height, format, flags: Int32
    }

    /// A context no picture uses; only this cache touches it.
    private struct Idle: @unchecked Sendable {
        var key: Key
        var context: OpaquePointer
    }

    /// Enough for a thumbnail and a preview on each of a few lanes' threads.
    static let shared = ScalerCache(capacity: 8)

    private let capacity: Int
    private let idle = Locked<[Idle]>([])

    init(capacity: Int) { self.capacity = capacity }

    deinit { for entry in idle.withLock({ $0 }) { sws_freeContext(entry.context) } }

    /// An idle scaler made for `key`, now the caller's.
    func take(_ key: Key) -> OpaquePointer? {
        idle.withLock { idle in
            guard let index = idle.lastIndex(where: { $0.key == key }) else { return nil }
            return idle.remove(at: index).context
        }
    }

    /// Keeps `context` for the next picture of its kind (and frees the least recently kept when full); false when
    /// the cache keeps nothing, and the caller frees it.
    func keep(_ context: OpaquePointer, for key: Key) -> Bool {
        guard capacity > 0 else { return false }
        let evicted = idle.withLock { idle -> OpaquePointer? in
            idle.append(Idle(key: key, context: context))
            return idle.count > capacity ? idle.removeFirst().context : nil
        }
        if let evicted { sws_freeContext(evicted) }
        return true
    }
}

/// Runs `body` with a fresh packet that is freed when the scope ends.
func withPacket<R>(_ call: FFmpegCall, _ body: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> R) throws(MediaError) -> R {
    var packet: UnsafeMutablePointer<AVPacket>? = try call.require(av_packet_alloc(), "av_packet_alloc")
    defer { av_packet_free(&packet) }
    return try body(packet!)
}

/// A scaler (`SwsContext`) for one source/destination geometry. Made from an idle one of the same geometry when
/// `ScalerCache` holds one, and given back to it when done.
final class Scaler {
    let pointer: OpaquePointer
    private let key: ScalerCache.Key
    /// Its colour ranges are set: only then may another picture use it.
    private var isReady = false

    init(from source: Frame, width: Int, height: Int, format: AVPixelFormat, flags requested: Int32,
         call: FFmpegCall) throws(MediaError) {
        let frame = source.pointer.pointee
        // libswscale reads packed RGB two pixels to a chroma sample unless told otherwise: the chroma of RGB kept as
        // RGB is halved, and at an odd width it reads a pixel past each row (whatever the buffer held: an edge whose
        // colour changed from run to run). Read at full width, RGB keeps its chroma and nothing past the row is read.
        var flags = requested
        if CFFmpeg_pix_fmt_is_rgb(source.format.rawValue) != 0 { flags |= CFFmpeg_SWS_FULL_CHR_H_INP() }
        if CFFmpeg_pix_fmt_is_rgb(format.rawValue) != 0 { flags |= CFFmpeg_SWS_FULL_CHR_H_INT() }
        key = ScalerCache.Key(sourceWidth: frame.width, sourceHeight: frame.height, sourceFormat: source.format.rawValue,
                              sourceRange: frame.color_range.rawValue, sourceSpace: frame.colorspace.rawValue,
                              width: Int32(width), height: Int32(height), format: format.rawValue, flags: flags)
        if let idle = ScalerCache.shared.take(key) {
            pointer = idle
            isReady = true
            return
        }
        guard let context = sws_getContext(frame.width, frame.height, source.format,
                                           Int32(width), Int32(height), format, flags, nil, nil, nil)
        else {
            throw call.failure("sws_getContext",
                               "cannot convert \(Self.name(source.format)) to \(Self.name(format))", .unsupported)
        }
        pointer = context
        try Self.setRanges(context, source: source, destination: format, call: call)
        isReady = true
    }

    deinit {
        if !isReady || !ScalerCache.shared.keep(pointer, for: key) { sws_freeContext(pointer) }
    }

    /// Scales `source` into `destination` (whose buffers are already allocated).
    func scale(_ source: Frame, into destination: Frame, call: FFmpegCall) throws(MediaError) {
        try call.check(sws_scale_frame(pointer, destination.pointer, source.pointer), "sws_scale_frame")
    }

    /// Full-range (JPEG) and limited-range (video) YUV are told apart from the frame, not only the
    /// pixel format, because decoders report range either way.
    private static func setRanges(_ context: OpaquePointer, source: Frame, destination: AVPixelFormat,
                                  call: FFmpegCall) throws(MediaError) {
        let sourceFormat = source.format.rawValue
        guard CFFmpeg_pix_fmt_is_rgb(sourceFormat) == 0, CFFmpeg_pix_fmt_is_gray(sourceFormat) == 0 else { return }
        let sourceFull = isFullRangeFormat(source.format) || source.pointer.pointee.color_range == AVCOL_RANGE_JPEG
        let toRGB = CFFmpeg_pix_fmt_is_rgb(destination.rawValue) != 0
        // RGB output is always full range; YUV output follows its format.
        let destinationFull = toRGB || isFullRangeFormat(destination)
        // The stream's YCbCr matrix: BT.709 (HD video), BT.2020 (10-bit HDR phone video), else BT.601.
        let space: Int32
        switch source.pointer.pointee.colorspace {
        case AVCOL_SPC_BT709: space = CFFmpeg_SWS_CS_ITU709()
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: space = CFFmpeg_SWS_CS_BT2020()
        default: space = CFFmpeg_SWS_CS_DEFAULT()
        }
        let sourceTable = sws_getCoefficients(space)
        let destinationTable = sws_getCoefficients(toRGB ? space : CFFmpeg_SWS_CS_DEFAULT())
        try call.check(sws_setColorspaceDetails(context, sourceTable, sourceFull ? 1 : 0,
                                                destinationTable, destinationFull ? 1 : 0, 0, 1 << 16, 1 << 16),
                       "sws_setColorspaceDetails")
    }

    static func isFullRangeFormat(_ format: AVPixelFormat) -> Bool {
        format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P || format == AV_PIX_FMT_YUVJ444P
            || format == AV_PIX_FMT_YUVJ440P || format == AV_PIX_FMT_YUVJ411P
    }

    static func name(_ format: AVPixelFormat) -> String {
        guard let name = av_get_pix_fmt_name(format) else { return "pixel format \(format.rawValue)" }
        return String(cString: name)
    }
}
