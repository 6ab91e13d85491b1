import CFFmpeg
import CairnCore
import Foundation

/// Reads a file's container and streams into a ``MediaProbe``.
struct Prober {
    let configuration: MediaConfiguration

    /// JPEG and PNG headers give everything a probe needs; reading them beats opening a demuxer.
    static let headerBytes = 256 << 10

    func probe(path: String) throws(MediaError) -> MediaProbe {
        let call = FFmpegCall(file: path)
        let size = try FileIO.size(of: path, call: call)
        guard size > 0 else { throw call.failure("probe", "empty file (0 bytes)", .corrupt) }
        let prefix = try FileIO.prefix(path, limit: min(size, Self.headerBytes), call: call)
        var header = StillHeader(bytes: prefix)
        var probe: MediaProbe
        if RawDecoder.isRaw(path: path, header: header.leadingBytes) {
            do {
                probe = try RawDecoder(configuration: configuration).probe(path: path, header: header, call: call)
            } catch where header.container.namesAnotherReader {
                // Content over extension: a JPEG renamed `.nef` is still a JPEG; the bytes choose the next reader.
                probe = try probeByContent(path: path, size: size, prefix: prefix, header: &header, call: call)
            }
        } else {
            probe = try probeByContent(path: path, size: size, prefix: prefix, header: &header, call: call)
        }
        probe.memory = MemoryEstimate.footprint(of: probe, header: header, fileBytes: size, configuration: configuration)
        return probe
    }

    /// A JPEG or PNG held whole in memory (`name` for its extension and errors), read from its header as `probe(path:)`
    /// reads it; nil for anything else, which needs a file.
    func probeStill(bytes: [UInt8], name: String) throws(MediaError) -> MediaProbe? {
        let call = FFmpegCall(file: name)
        guard !bytes.isEmpty else { throw call.failure("probe", "empty file (0 bytes)", .corrupt) }
        let header = StillHeader(bytes: bytes)
        guard !RawDecoder.isRaw(path: name, header: header.leadingBytes),
              header.container == .jpeg || header.container == .png, header.hasDimensions else { return nil }
        var probe = try stillProbe(header, call: call)
        probe.memory = MemoryEstimate.footprint(of: probe, header: header, fileBytes: bytes.count, configuration: configuration)
        return probe
    }

    /// Routes a file by its first bytes alone.
    private func probeByContent(path: String, size: Int, prefix: [UInt8], header: inout StillHeader,
                                call: FFmpegCall) throws(MediaError) -> MediaProbe {
        if header.container == .tiff {
            return try TIFFDecoder(configuration: configuration).probe(path: path, header: header, call: call)
        }
        if header.container == .heif {
            return try HEIFDecoder(configuration: configuration).probe(path: path, brand: header.brand, call: call)
        }
        // Only an animated WebP (its header says so) is read whole; FFmpeg probes still ones.
        if header.container == .webp, size <= configuration.maxStillBytes,
           prefix.withUnsafeBufferPointer({ WebPDecoder.isAnimated($0.baseAddress!, count: $0.count) }) {
            let bytes = size <= prefix.count ? prefix : try FileIO.prefix(path, limit: size, call: call)
            if let probe = try bytes.withUnsafeBufferPointer({ (buffer) throws(MediaError) in
                try WebPDecoder(configuration: configuration).probeAnimated(buffer.baseAddress!, count: buffer.count, call: call)
            }) { return probe }
        }
        // libjxl finds the size in the codestream and the Exif box wherever it is: give it the file.
        if header.container == .jxl, size <= configuration.maxStillBytes {
            let bytes = size <= prefix.count ? prefix : try FileIO.prefix(path, limit: size, call: call)
            return try bytes.withUnsafeBufferPointer { (buffer) throws(MediaError) in
                try JXLDecoder(configuration: configuration).probe(buffer.baseAddress!, count: buffer.count, call: call)
            }
        }
        if header.container == .jpeg, let resume = header.jpegResumeOffset, resume < size {
            try header.readJPEGFrame(from: resume, reader: FileReader(path: path, call: call))
        }
        if (header.container == .jpeg || header.container == .png), header.hasDimensions {
            return try stillProbe(header, call: call)
        }
        var probe: MediaProbe
        do {
            probe = try containerProbe(path: path, header: header, call: call)
        } catch where (error.category == .corrupt || error.category == .unsupported) && PixbufDecoder.covers(header.container) {
            // A still FFmpeg cannot size (a BMP with a V5 header) may be one gdk-pixbuf reads.
            guard let still = try PixbufDecoder(configuration: configuration).probe(path: path, call: call) else { throw error }
            return still
        }
        // Without find_stream_info FFmpeg leaves the overall rate unset; ffprobe's figure is size over duration.
        if probe.kind == .video, probe.bitRate == nil, let duration = probe.durationSeconds, duration > 0 {
            probe.bitRate = Int((Double(size) * 8 / duration).rounded())
        }
        return probe
    }

    private func checkPixels(_ width: Int, _ height: Int, call: FFmpegCall) throws(MediaError) {
        try call.checkPixels(width, height, cap: configuration.maxPixels, operation: "probe")
    }

    private func stillProbe(_ header: StillHeader, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let width = header.width ?? 0, height = header.height ?? 0
        try checkPixels(width, height, call: call)
        let exif = header.exif ?? ExifSummary()
        let displayed = exif.orientation.displayed(width: width, height: height)
        let codec = header.container == .jpeg ? "mjpeg" : "png"
        var probe = MediaProbe(
            container: header.container.rawValue, kind: .photo,
            streams: [.init(index: 0, type: "video", codec: codec, width: width, height: height)],
            width: displayed.width, height: displayed.height, orientation: exif.orientation,
            captureDate: exif.captureTime?.sortDate, captureTime: exif.captureTime,
            cameraMake: exif.make, cameraModel: exif.model, gps: exif.gps, contentIdentifier: exif.contentIdentifier,
            colourProfile: header.iccProfile.flatMap { ColourProfile(bytes: $0) }.flatMap { $0.isSRGB ? nil : $0.name },
            animated: header.animationFrames.map { $0 > 1 }, frameCount: header.animationFrames)
        probe.burstIdentifier = exif.burstIdentifier
        return probe
    }

    private func containerProbe(path: String, header: StillHeader, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let input = try FormatInput(path: path, probeBytes: configuration.probeBytes,
                                    analyzeMicroseconds: configuration.analyzeMicroseconds, call: call)
        if !input.parametersComplete { try input.findStreamInfo() }
        guard input.streamCount > 0 else {
            throw call.failure("probe", "no streams in \(input.formatName) container", .unsupported)
        }
        var streams: [MediaProbe.Stream] = []
        var hasAudio = false
        for index in 0..<input.streamCount {
            let parameters = input.stream(index).pointee.codecpar.pointee
            let type = av_get_media_type_string(parameters.codec_type).map { String(cString: $0) } ?? "unknown"
            let codec = String(cString: avcodec_get_name(parameters.codec_id))
            let isVideo = parameters.codec_type == AVMEDIA_TYPE_VIDEO
            if parameters.codec_type == AVMEDIA_TYPE_AUDIO { hasAudio = true }
            streams.append(.init(index: index, type: type, codec: codec,
                                 width: isVideo ? Int(parameters.width) : nil,
                                 height: isVideo ? Int(parameters.height) : nil))
        }
        let format = input.formatName
        let context = input.pointer.pointee
        let best = av_find_best_stream(input.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        // No video stream is an answer (audio only is judged below); any other failure is an error.
        if best < 0 && best != CFFmpeg_AVERROR_STREAM_NOT_FOUND() { try call.check(best, "av_find_best_stream") }
        var probe = MediaProbe(container: format, kind: .other, streams: streams, hasAudio: hasAudio)
        if context.bit_rate > 0 { probe.bitRate = Int(context.bit_rate) }
        if context.duration > 0, context.duration != CFFmpeg_AV_NOPTS_VALUE() {
            probe.durationSeconds = Double(context.duration) / Double(CFFmpeg_AV_TIME_BASE())
        }
        if best >= 0 {
            let stream = input.stream(Int(best))
            let parameters = stream.pointee.codecpar.pointee
            try checkPixels(Int(parameters.width), Int(parameters.height), call: call)
            let orientation = header.exif?.orientation
                ?? Orientation(counterclockwiseDegrees: CFFmpeg_stream_display_rotation(stream))
            let displayed = orientation.displayed(width: Int(parameters.width), height: Int(parameters.height))
            probe.width = displayed.width
            probe.height = displayed.height
            probe.orientation = orientation
            if let format = av_pix_fmt_desc_get(AVPixelFormat(rawValue: parameters.format)) {
                probe.bitDepth = Int(format.pointee.comp.0.depth)
            }
            probe.kind = Self.isStillContainer(format, header: header) ? .photo : .video
            if probe.kind == .video {
                let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
                if rate.num > 0, rate.den > 0 { probe.frameRate = av_q2d(rate) }
                if probe.durationSeconds == nil, stream.pointee.duration > 0 {
                    probe.durationSeconds = Double(stream.pointee.duration) * av_q2d(stream.pointee.time_base)
                }
            } else {
                probe.durationSeconds = nil
                probe.bitRate = nil
            }
        } else if !hasAudio {
            throw call.failure("probe", "no audio or video stream in \(format) container", .unsupported)
        }
        let metadata = Metadata(context.metadata, fallback: best >= 0 ? input.stream(Int(best)).pointee.metadata : nil,
                                owner: input)
        if let exif = header.exif {
            probe.captureTime = exif.captureTime
            probe.captureDate = exif.captureTime?.sortDate
            probe.contentIdentifier = exif.contentIdentifier
            probe.burstIdentifier = exif.burstIdentifier
            probe.cameraMake = exif.make
            probe.cameraModel = exif.model
            probe.gps = exif.gps
        } else {
            // QuickTime's creationdate keeps the phone's wall clock and offset; MP4's creation_time is UTC.
            probe.captureTime = metadata["com.apple.quicktime.creationdate"].flatMap { CaptureTime.iso($0, source: "quicktime") }
                ?? metadata["creation_time"].flatMap { CaptureTime.iso($0, source: "mp4") }
            probe.captureDate = probe.captureTime?.sortDate
            probe.contentIdentifier = metadata["com.apple.quicktime.content.identifier"]
            probe.cameraMake = metadata["com.apple.quicktime.make"] ?? metadata["make"]
            probe.cameraModel = metadata["com.apple.quicktime.model"] ?? metadata["model"]
            probe.gps = (metadata["com.apple.quicktime.location.ISO6709"] ?? metadata["location"])
                .flatMap { GPSCoordinate(iso6709: $0) }
        }
        return probe
    }

    /// Image demuxers (`image2`, `*_pipe`, ...) hold one picture; GIF and WebP are treated as stills too.
    static func isStillContainer(_ format: String, header: StillHeader) -> Bool {
        if header.container != .other { return true }
        return format == "image2" || format.hasSuffix("_pipe") || format == "gif" || format == "webp"
    }
}

/// Read-only lookups into FFmpeg metadata dictionaries, which belong to (and live as long as) `owner`.
struct Metadata {
    let primary: OpaquePointer?
    let fallback: OpaquePointer?
    private let owner: FormatInput

    init(_ primary: OpaquePointer?, fallback: OpaquePointer?, owner: FormatInput) {
        self.primary = primary
        self.fallback = fallback
        self.owner = owner
    }

    subscript(key: String) -> String? {
        for dictionary in [primary, fallback] {
            if let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value {
                let text = String(cString: value).trimmingCharacters(in: .whitespaces)
                if !text.isEmpty { return text }
            }
        }
        return nil
    }
}
