import CFFmpeg
import CairnCore

/// One decoded picture (a still, or a video's poster frame) and how to turn it for display.
/// Every derivative is made from this one decode.
final class DecodedPicture {
    let frame: Frame
    let orientation: Orientation
    let file: String
    /// The RGB profile the frame's colours are in, when it is not sRGB: derivatives are converted.
    let profile: ColourProfile?
    /// What owns the frame's pixels when another library decoded them in place (kept alive with the frame).
    private let owner: AnyObject?
    /// 2 when the frame holds one field of an interlaced picture: its height counts double for display.
    let fieldScale: Int
    /// The file shows as this frame does in any viewer: a Huffman-coded 8-bit YCbCr or grey JPEG, decoded at full
    /// size, upright, sRGB or untagged. Such a file can be its own preview.
    let isPlainJPEG: Bool

    init(frame: Frame, orientation: Orientation, file: String, profile: ColourProfile? = nil, owner: AnyObject? = nil,
         fieldScale: Int = 1, isPlainJPEG: Bool = false) {
        self.fieldScale = fieldScale
        self.isPlainJPEG = isPlainJPEG
        self.frame = frame
        self.orientation = orientation
        self.file = file
        self.profile = profile
        self.owner = owner
    }

    /// Displayed size of the decoded frame (which may be smaller than the file's, after shrink-on-load).
    var displayedSize: (width: Int, height: Int) { orientation.displayed(width: frame.width, height: storedHeight) }

    /// The picture's full stored height (a single field counts double).
    var storedHeight: Int { frame.height * fieldScale }

    /// Transforms from `profile` to sRGB, made once per layout: the thumbnail, preview and clip share them.
    private var transforms: [ColourTransform.Layout: ColourTransform] = [:]

    func colourTransform(_ layout: ColourTransform.Layout) -> ColourTransform? {
        guard let profile else { return nil }
        if let made = transforms[layout] { return made }
        let made = ColourTransform(from: profile, input: layout, output: layout)
        transforms[layout] = made
        return made
    }

    private var conversionMade = false
    private var conversion: YCbCrColourConversion?

    /// The conversion of `profile` to sRGB done on YCbCr, made once; nil without a profile, or for one that is not a
    /// matrix-shaper (those go through `colourTransform`).
    func yCbCrConversion() -> YCbCrColourConversion? {
        if !conversionMade {
            conversionMade = true
            conversion = profile?.matrixShaper.flatMap(YCbCrColourConversion.init)
        }
        return conversion
    }
}

/// Decodes stills and poster frames, within the configured caps.
struct PictureDecoder {
    let configuration: MediaConfiguration

    /// Decodes a still so that its short side stays at least twice `targetShortSide` where shrink-on-load allows.
    func decodeStill(path: String, targetShortSide: Int) throws(MediaError) -> DecodedPicture {
        let call = FFmpegCall(file: path)
        _ = quietFFmpegLogging
        let size = try FileIO.size(of: path, call: call)
        guard size > 0 else { throw call.failure("decode", "empty file (0 bytes)", .corrupt) }
        guard size <= configuration.maxStillBytes else {
            throw call.failure("decode", "still of \(size) bytes is above the cap of \(configuration.maxStillBytes)", .tooLarge)
        }
        // Formats with a decoder of their own read the file themselves: route them from the first bytes.
        let leading = StillHeader(bytes: try FileIO.prefix(path, limit: min(size, 64), call: call))
        if RawDecoder.isRaw(path: path, header: leading.leadingBytes) {
            do {
                return try RawDecoder(configuration: configuration).decode(path: path, targetShortSide: targetShortSide, call: call)
            } catch where leading.container.namesAnotherReader {
                // Content over extension, as in the probe.
                return try decodeByContent(path: path, size: size, leading: leading, targetShortSide: targetShortSide, call: call)
            }
        }
        return try decodeByContent(path: path, size: size, leading: leading, targetShortSide: targetShortSide, call: call)
    }

    /// Routes a still by its first bytes alone.
    private func decodeByContent(path: String, size: Int, leading: StillHeader, targetShortSide: Int,
                                 call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        if leading.container == .tiff {
            // libtiff renders what FFmpeg's TIFF decoder cannot (Lab, BigTIFF, old JPEG); FFmpeg takes the
            // sample depths libtiff's RGBA interface refuses (12- and 32-bit).
            do {
                return try TIFFDecoder(configuration: configuration).decode(path: path, call: call)
            } catch where error.category == .unsupported {
                if let picture = try? decodeFromContainer(path: path, targetShortSide: targetShortSide, seekFraction: nil,
                                                          call: call) { return picture }
                if let picture = try TIFFDecoder(configuration: configuration).decodeScalar(path: path, call: call) {
                    return picture
                }
                throw error
            }
        }
        if leading.container == .heif {
            return try HEIFDecoder(configuration: configuration).decode(
                path: path, brand: leading.brand, targetShortSide: targetShortSide, call: call)
        }
        // JPEG and PNG are decoded from one packet holding the whole file; its first bytes give the header.
        let file = try WholeFile(path: path, size: size, call: call)
        let read = file.count
        // Parsed in place over the whole file (a CMYK profile alone can pass the probe's window); nothing is copied.
        let header = StillHeader(bytes: file.bytes)
        if header.container == .webp, let picture = try WebPDecoder(configuration: configuration).decodeAnimated(
            file.data, count: read, call: call) {
            return picture
        }
        switch header.container {
        case .jpeg:
            if configuration.jpegDecoder == .libjpegTurbo,
               let picture = try JPEGDecoder(configuration: configuration).decode(
                   file.data, count: read, header: header, targetShortSide: targetShortSide, call: call) {
                return picture
            }
            return try decodeWholeFile(file, header: header, targetShortSide: targetShortSide, call: call)
        case .png:
            return try withLastResort(path: path, header: header, call: call) { () throws(MediaError) in
                try decodeWholeFile(file, header: header, targetShortSide: targetShortSide, call: call)
            }
        case .jxl:
            return try JXLDecoder(configuration: configuration).decode(
                file.data, count: read, targetShortSide: targetShortSide, call: call)
        default:
            let picture = try withLastResort(path: path, header: header, call: call) { () throws(MediaError) in
                try decodeFromContainer(path: path, targetShortSide: targetShortSide, seekFraction: nil, call: call)
            }
            guard let exif = header.exif else { return picture }
            return DecodedPicture(frame: picture.frame, orientation: exif.orientation, file: path, owner: picture)
        }
    }

    /// FFmpeg first; when it calls the file corrupt or unsupported, gdk-pixbuf (which reads BMP, GIF and PNG
    /// variants FFmpeg refuses); when that fails too, FFmpeg's reason stands.
    private func withLastResort(path: String, header: StillHeader, call: FFmpegCall,
                                _ decode: () throws(MediaError) -> DecodedPicture) throws(MediaError) -> DecodedPicture {
        do {
            return try decode()
        } catch where (error.category == .corrupt || error.category == .unsupported) && PixbufDecoder.covers(header.container) {
            let orientation = header.exif?.orientation ?? .identity
            if let picture = try? PixbufDecoder(configuration: configuration).decode(path: path, orientation: orientation, call: call) {
                return picture
            }
            throw error
        }
    }

    /// Decodes the keyframe nearest before 10 % of a video's duration, reached by seeking, not by decoding from the start.
    func decodePoster(path: String, targetShortSide: Int) throws(MediaError) -> DecodedPicture {
        let call = FFmpegCall(file: path)
        let size = try FileIO.size(of: path, call: call)
        guard size > 0 else { throw call.failure("decode", "empty file (0 bytes)", .corrupt) }
        let picture: DecodedPicture
        do {
            picture = try decodeFromContainer(path: path, targetShortSide: targetShortSide, seekFraction: 0.1, call: call)
        } catch where error.category == .corrupt {
            // A stream without a seek index (MPEG-TS from AVCHD cameras) can land past its only keyframe:
            // the first picture is a fine poster too.
            picture = try decodeFromContainer(path: path, targetShortSide: targetShortSide, seekFraction: nil, call: call)
        }
        return Self.deinterlaced(picture)
    }

    /// An interlaced poster (AVCHD, DV, broadcast) shows combs where things moved between its two fields:
    /// keep one field (every other line, same buffers) and let the scaler fill the height back.
    static func deinterlaced(_ picture: DecodedPicture) -> DecodedPicture {
        let source = picture.frame.pointer
        guard source.pointee.interlaced_frame != 0, source.pointee.height >= 4,
              let field = try? Frame(call: FFmpegCall(file: picture.file)) else { return picture }
        field.pointer.pointee.width = source.pointee.width
        field.pointer.pointee.height = source.pointee.height / 2
        field.pointer.pointee.format = source.pointee.format
        field.pointer.pointee.color_range = source.pointee.color_range
        field.pointer.pointee.colorspace = source.pointee.colorspace
        field.pointer.pointee.sample_aspect_ratio = source.pointee.sample_aspect_ratio
        for plane in 0..<4 {
            guard let data = picture.frame.plane(plane) else { break }
            CFFmpeg_frame_borrow_plane(field.pointer, Int32(plane), data, Int32(picture.frame.linesize(plane) * 2))
        }
        return DecodedPicture(frame: field, orientation: picture.orientation, file: picture.file, profile: picture.profile,
                              owner: picture, fieldScale: 2)
    }

    // MARK: - JPEG and PNG: the whole file is one packet

    private func decodeWholeFile(_ file: WholeFile, header: StillHeader, targetShortSide: Int,
                                 call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        if header.hasDimensions { try checkPixels(header.width!, header.height!, call: call) }
        let codecID = header.container == .jpeg ? AV_CODEC_ID_MJPEG : AV_CODEC_ID_PNG
        guard let codec = avcodec_find_decoder(codecID) else {
            throw call.failure("avcodec_find_decoder", "no \(header.container.rawValue) decoder in this FFmpeg", .unsupported)
        }
        let decoder = try CodecContext(codec: codec, call: call)
        configure(decoder, width: header.width, height: header.height, targetShortSide: targetShortSide)
        try decoder.open()
        let frame = try Frame(call: call)
        let packet = try file.packet(call: call)
        try call.check(avcodec_send_packet(decoder.pointer, packet.pointer), "avcodec_send_packet")
        try call.check(avcodec_send_packet(decoder.pointer, nil), "avcodec_send_packet")
        let rc = avcodec_receive_frame(decoder.pointer, frame.pointer)
        if rc == CFFmpeg_AVERROR_EOF() { throw call.failure("avcodec_receive_frame", "no picture in the file", .corrupt) }
        try call.check(rc, "avcodec_receive_frame")
        return DecodedPicture(frame: frame, orientation: header.exif?.orientation ?? .identity, file: call.file)
    }

    // MARK: - Anything else: demux, optionally seek, decode the first picture

    private func decodeFromContainer(path: String, targetShortSide: Int, seekFraction: Double?,
                                     call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let input = try FormatInput(path: path, probeBytes: configuration.probeBytes,
                                    analyzeMicroseconds: configuration.analyzeMicroseconds, call: call)
        if !input.parametersComplete { try input.findStreamInfo() }
        var codecPointer: UnsafePointer<AVCodec>? = nil
        let streamIndex = av_find_best_stream(input.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, &codecPointer, 0)
        try call.check(streamIndex, "av_find_best_stream")
        // `stream` and `parameters` are borrowed from `input`, which stays alive to the end of this scope.
        defer { withExtendedLifetime(input) {} }
        let stream = input.stream(Int(streamIndex))
        let parameters: UnsafeMutablePointer<AVCodecParameters> = stream.pointee.codecpar!
        guard let codec = codecPointer else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw call.failure("avcodec_find_decoder", "no decoder for \(name) in this FFmpeg", .unsupported)
        }
        try checkPixels(Int(parameters.pointee.width), Int(parameters.pointee.height), call: call)
        let decoder = try CodecContext(codec: codec, call: call)
        try call.check(avcodec_parameters_to_context(decoder.pointer, parameters), "avcodec_parameters_to_context")
        configure(decoder, width: Int(parameters.pointee.width), height: Int(parameters.pointee.height),
                  targetShortSide: targetShortSide)
        decoder.pointer.pointee.pkt_timebase = stream.pointee.time_base
        try decoder.open()
        if let seekFraction { seek(input, stream: stream, index: streamIndex, fraction: seekFraction) }

        let frame = try Frame(call: call)
        try withPacket(call) { (packet) throws(MediaError) in
            var packets = 0
            var failures = 0
            var lastFailure: MediaError?
            while true {
                let rc = avcodec_receive_frame(decoder.pointer, frame.pointer)
                if rc >= 0 { return }
                if rc == CFFmpeg_AVERROR_EOF() {
                    throw lastFailure ?? call.failure("decode", "stream ended before any picture decoded", .corrupt)
                }
                if rc != CFFmpeg_AVERROR_EAGAIN() { try call.check(rc, "avcodec_receive_frame") }
                packets += 1
                try call.checkInterrupt()
                guard packets <= configuration.maxPacketsPerDecode else {
                    throw call.failure("decode", "no picture after \(configuration.maxPacketsPerDecode) packets", .corrupt)
                }
                let read = av_read_frame(input.pointer, packet)
                if read == CFFmpeg_AVERROR_EOF() {
                    try call.check(avcodec_send_packet(decoder.pointer, nil), "avcodec_send_packet")
                    continue
                }
                try call.check(read, "av_read_frame")
                defer { av_packet_unref(packet) }
                guard packet.pointee.stream_index == streamIndex else { continue }
                let sent = avcodec_send_packet(decoder.pointer, packet)
                if sent < 0 && sent != CFFmpeg_AVERROR_EAGAIN() {
                    // A damaged packet is skipped; too many in a row means the stream is broken.
                    failures += 1
                    lastFailure = call.error(sent, "avcodec_send_packet")
                    if failures > 16 { throw lastFailure! }
                }
            }
        }
        let orientation = Orientation(counterclockwiseDegrees: CFFmpeg_stream_display_rotation(stream))
        return DecodedPicture(frame: frame, orientation: orientation, file: path)
    }

    /// Seeks to the keyframe at or before `fraction` of the duration. A file that cannot seek
    /// is decoded from where it is: the first picture is still a fine poster.
    private func seek(_ input: FormatInput, stream: UnsafeMutablePointer<AVStream>, index: Int32, fraction: Double) {
        let timeBase = stream.pointee.time_base
        var duration = stream.pointee.duration
        if duration <= 0 || duration == CFFmpeg_AV_NOPTS_VALUE(), input.pointer.pointee.duration > 0 {
            duration = av_rescale_q(input.pointer.pointee.duration, AVRational(num: 1, den: CFFmpeg_AV_TIME_BASE()), timeBase)
        }
        guard duration > 0, duration != CFFmpeg_AV_NOPTS_VALUE() else { return }
        let start = stream.pointee.start_time == CFFmpeg_AV_NOPTS_VALUE() ? 0 : stream.pointee.start_time
        let target = start + Int64(Double(duration) * fraction)
        // A failed seek leaves the demuxer where it was, which is the fallback above: not an error.
        if av_seek_frame(input.pointer, index, target, CFFmpeg_AVSEEK_FLAG_BACKWARD()) < 0 { return }
    }

    private func configure(_ decoder: CodecContext, width: Int?, height: Int?, targetShortSide: Int) {
        let context = decoder.pointer
        context.pointee.max_pixels = Int64(configuration.maxPixels)
        context.pointee.thread_count = Int32(configuration.decoderThreads)
        let maxLevel = Int(decoder.codec.pointee.max_lowres)
        if configuration.shrinkOnLoad, maxLevel > 0, let width, let height, width > 0, height > 0 {
            context.pointee.lowres = Int32(SizePlanning.lowresLevel(
                width: width, height: height, targetShortSide: targetShortSide, maxLevel: maxLevel,
                margin: configuration.shrinkOnLoadMargin))
        }
    }

    private func checkPixels(_ width: Int, _ height: Int, call: FFmpegCall) throws(MediaError) {
        try call.checkPixels(width, height, cap: configuration.maxPixels, operation: "decode")
    }
}
