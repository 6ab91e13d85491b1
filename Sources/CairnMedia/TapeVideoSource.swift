import CFFmpeg

/// Re-encodes a source video as a tape clip: decoded from the start, placed upright on the tape's canvas,
/// re-timed to the tape's constant frame rate (frames dropped or repeated by timestamp), trimmed to a maximum,
/// its sound resampled alongside (or silence when it has none).
struct TapeVideoSource {
    let configuration: MediaConfiguration
    let path: String
    /// The bytes of `path` that are the video (a motion photo's movie), or nil: all of them.
    let byteRange: Range<Int>?
    let maxSeconds: Double
    let muxer: TapeMuxer

    private var call: FFmpegCall { muxer.call }
    private var fps: Double { Double(muxer.settings.framesPerSecond) }

    /// A decoder for stream `index` of `input`, or nil when this FFmpeg has none for it.
    private func decoder(_ input: FormatInput, index: Int32, codec: UnsafePointer<AVCodec>?) throws(MediaError) -> CodecContext? {
        guard let codec else { return nil }
        let stream = input.stream(Int(index))
        let decoder = try CodecContext(codec: codec, call: call)
        try call.check(avcodec_parameters_to_context(decoder.pointer, stream.pointee.codecpar), "avcodec_parameters_to_context")
        decoder.pointer.pointee.pkt_timebase = stream.pointee.time_base
        decoder.pointer.pointee.max_pixels = Int64(configuration.maxPixels)
        decoder.pointer.pointee.thread_count = Int32(max(1, configuration.decoderThreads))
        try decoder.open()
        return decoder
    }

    func write(onSegment: (Int, Double) -> Void) throws(MediaError) {
        // FFmpeg's subfile protocol reads a byte range of a file as a file of its own.
        let url = byteRange.map { "subfile,,start,\($0.lowerBound),end,\($0.upperBound),,:" + path } ?? path
        let input = try FormatInput(path: url, probeBytes: configuration.probeBytes,
                                    analyzeMicroseconds: configuration.analyzeMicroseconds, call: call)
        defer { withExtendedLifetime(input) {} }  // streams are borrowed from it
        if !input.parametersComplete { try input.findStreamInfo() }
        var videoCodec: UnsafePointer<AVCodec>? = nil
        let videoIndex = av_find_best_stream(input.pointer, AVMEDIA_TYPE_VIDEO, -1, -1, &videoCodec, 0)
        try call.check(videoIndex, "av_find_best_stream")
        let videoStream = input.stream(Int(videoIndex))
        let parameters = videoStream.pointee.codecpar.pointee
        guard videoCodec != nil else {
            let name = String(cString: avcodec_get_name(parameters.codec_id))
            throw call.failure("avcodec_find_decoder", "no decoder for \(name) in this FFmpeg", .unsupported)
        }
        try call.checkPixels(Int(parameters.width), Int(parameters.height), cap: configuration.maxPixels, operation: "decode")
        let video = try decoder(input, index: videoIndex, codec: videoCodec)!
        var audioCodec: UnsafePointer<AVCodec>? = nil
        let audioIndex = av_find_best_stream(input.pointer, AVMEDIA_TYPE_AUDIO, -1, videoIndex, &audioCodec, 0)
        // A sound track this FFmpeg cannot decode is treated as none: the clip gets silence.
        let audio = audioIndex >= 0 ? try decoder(input, index: audioIndex, codec: audioCodec) : nil
        let orientation = Orientation(counterclockwiseDegrees: CFFmpeg_stream_display_rotation(videoStream))

        // The clip's time 0 is the video's start; the sound is placed relative to it.
        let videoBase = videoStream.pointee.time_base
        let start = videoStream.pointee.start_time == CFFmpeg_AV_NOPTS_VALUE() ? 0 : videoStream.pointee.start_time
        let origin = Double(start) * av_q2d(videoBase)
        let audioBase = audioIndex >= 0 ? input.stream(Int(audioIndex)).pointee.time_base : AVRational(num: 1, den: 1)
        let feed = try TapeAudioFeed(muxer: muxer)
        let total = max(1, Int((maxSeconds * fps).rounded()))
        let totalAudio = muxer.audioSamples(forFrames: total)

        var canvas: TapeCanvas?
        var lastTime = 0.0
        var lastDuration = 1 / fps
        var videoDone = false
        let flags = CFFmpeg_SWS_BICUBIC()

        func emit() throws(MediaError) {
            try call.checkInterrupt()
            try muxer.writeVideo(canvas!.frame)
            try feed.encode(upTo: muxer.audioSamples(forFrames: muxer.videoFrames), silence: audio == nil)
            muxer.report(onSegment)
        }
        func take(_ frame: Frame) throws(MediaError) {
            let stamp = frame.pointer.pointee.best_effort_timestamp
            let time = stamp == CFFmpeg_AV_NOPTS_VALUE() ? lastTime + lastDuration : Double(stamp) * av_q2d(videoBase) - origin
            if canvas != nil {
                // Output frame n shows the newest source frame that starts by its middle.
                while muxer.videoFrames < total, (Double(muxer.videoFrames) + 0.5) / fps < time { try emit() }
            } else {
                canvas = try makeCanvas(for: frame, orientation: orientation)
            }
            if muxer.videoFrames >= total { videoDone = true; return }
            try canvas!.place(source: frame, flags: flags)
            lastTime = time
            let duration = frame.pointer.pointee.pkt_duration
            lastDuration = duration > 0 ? Double(duration) * av_q2d(videoBase) : 1 / fps
        }

        let decoded = try Frame(call: call)
        var failures = 0
        var lastFailure: MediaError?
        /// Sends `packet` (nil: end of stream) to `decoder` and hands each frame it gives back to `body`.
        func decode(_ decoder: CodecContext, _ packet: UnsafeMutablePointer<AVPacket>?,
                    _ body: (Frame) throws(MediaError) -> Void) throws(MediaError) {
            let sent = avcodec_send_packet(decoder.pointer, packet)
            if sent < 0 && sent != CFFmpeg_AVERROR_EAGAIN() && sent != CFFmpeg_AVERROR_EOF() {
                // A damaged packet is skipped; many of them means the stream is broken.
                failures += 1
                lastFailure = call.error(sent, "avcodec_send_packet")
                if failures > 16 { throw lastFailure! }
                return
            }
            while true {
                let rc = avcodec_receive_frame(decoder.pointer, decoded.pointer)
                if rc == CFFmpeg_AVERROR_EAGAIN() || rc == CFFmpeg_AVERROR_EOF() { return }
                if rc < 0 {
                    failures += 1
                    lastFailure = call.error(rc, "avcodec_receive_frame")
                    if failures > 16 { throw lastFailure! }
                    continue
                }
                defer { av_frame_unref(decoded.pointer) }
                try body(decoded)
            }
        }
        func pushAudio(_ frame: Frame) throws(MediaError) {
            let stamp = frame.pointer.pointee.best_effort_timestamp
            let time: Double? = stamp == CFFmpeg_AV_NOPTS_VALUE() ? nil : Double(stamp) * av_q2d(audioBase) - origin
            try feed.push(frame, seconds: time)
        }

        try withPacket(call) { (packet) throws(MediaError) in
            while true {
                try call.checkInterrupt()
                let audioShort = audio != nil && muxer.audioSamples + feed.buffered < totalAudio
                if videoDone && !audioShort { break }
                let read = av_read_frame(input.pointer, packet)
                if read == CFFmpeg_AVERROR_EOF() { break }
                if read < 0 {
                    // A file cut short ends the clip where it breaks, once something played.
                    if canvas == nil { try call.check(read, "av_read_frame") }
                    break
                }
                defer { av_packet_unref(packet) }
                if packet.pointee.stream_index == videoIndex, !videoDone {
                    try decode(video, packet, take)
                } else if packet.pointee.stream_index == audioIndex, let audio, audioShort {
                    try decode(audio, packet, pushAudio)
                }
            }
        }
        if !videoDone { try decode(video, nil, take) }
        guard canvas != nil else {
            throw lastFailure ?? call.failure("decode", "the video has no picture that decodes", .corrupt)
        }
        // The last picture lasts its own duration, within the maximum.
        let end = min(total, max(muxer.videoFrames + 1, Int(((lastTime + lastDuration) * fps).rounded())))
        while muxer.videoFrames < end { try emit() }
        try feed.finish(total: muxer.audioSamples(forFrames: muxer.videoFrames))
        muxer.report(onSegment)
    }

    private func makeCanvas(for frame: Frame, orientation: Orientation) throws(MediaError) -> TapeCanvas {
        let ratio = frame.pointer.pointee.sample_aspect_ratio
        // Non-square pixels (anamorphic DV, some camcorders) widen or narrow the picture as displayed.
        let pixelShape = ratio.num > 0 && ratio.den > 0 ? av_q2d(ratio) : 1
        let stored = (Double(frame.width) * pixelShape, Double(frame.height))
        let displayed = orientation.swapsDimensions ? (stored.1, stored.0) : stored
        return try TapeCanvas(settings: muxer.settings, displayedWidth: displayed.0, displayedHeight: displayed.1,
                              orientation: orientation, call: call)
    }
}
