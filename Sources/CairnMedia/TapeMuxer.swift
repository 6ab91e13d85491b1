import CairnCore
import CFFmpeg
import Foundation

/// An audio FIFO (`AVAudioFifo`) of planar or packed samples.
final class AudioFifo {
    let pointer: OpaquePointer

    init(format: AVSampleFormat, channels: Int, call: FFmpegCall) throws(MediaError) {
        pointer = try call.require(av_audio_fifo_alloc(format, Int32(channels), 4096), "av_audio_fifo_alloc")
    }

    deinit { av_audio_fifo_free(pointer) }

    var count: Int { Int(av_audio_fifo_size(pointer)) }
}

/// Encodes one tape clip's video (libx264) and audio (AAC) and writes them through the hls muxer as fMP4
/// segments, learning from the playlist the muxer rewrites after each segment which segments are complete.
final class TapeMuxer {
    let settings: TapeFormat
    let call: FFmpegCall
    private let output: FormatOutput
    let video: CodecContext
    let audio: CodecContext
    private let videoStream: UnsafeMutablePointer<AVStream>
    private let audioStream: UnsafeMutablePointer<AVStream>
    private let packet: SharedPacket
    private let playlistPath: String
    /// Segment durations the playlist has listed so far, and how many of them were reported.
    private(set) var segments: [Double] = []
    private var reported = 0
    private(set) var videoFrames = 0
    private(set) var audioSamples = 0

    init(folder: String, settings: TapeFormat, effort: TapeClipRequest.Effort,
         call: FFmpegCall) throws(MediaError) {
        _ = quietFFmpegLogging
        self.settings = settings
        self.call = call
        playlistPath = folder + "/" + TapeClipRequest.playlistName
        output = try FormatOutput(path: playlistPath, format: "hls", call: call)
        packet = SharedPacket(try call.require(av_packet_alloc(), "av_packet_alloc"))
        video = try Self.videoEncoder(settings, effort: effort, call: call)
        audio = try Self.audioEncoder(settings, call: call)
        videoStream = try Self.addStream(output, for: video, call: call)
        audioStream = try Self.addStream(output, for: audio, call: call)
        videoStream.pointee.avg_frame_rate = video.pointer.pointee.framerate

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        let muxer: [(String, String)] = [
            ("hls_segment_type", "fmp4"), ("hls_time", String(settings.segmentSeconds)),
            ("hls_fmp4_init_filename", TapeClipRequest.initName), ("hls_segment_filename", folder + "/seg-%05d.m4s"),
            ("hls_playlist_type", "event"), ("hls_flags", "independent_segments"), ("hls_list_size", "0"),
        ]
        for (key, value) in muxer { try call.check(av_dict_set(&options, key, value, 0), "av_dict_set") }
        try call.check(avformat_write_header(output.pointer, &options), "avformat_write_header")
    }

    /// Samples per AAC frame; the last frame of a clip may be shorter.
    var audioFrameSize: Int { max(1, Int(audio.pointer.pointee.frame_size)) }

    /// The audio samples that last exactly as long as `frames` video frames.
    func audioSamples(forFrames frames: Int) -> Int {
        frames * settings.audioSampleRate / settings.framesPerSecond
    }

    /// Encodes `frame` (a `width`x`height` yuv420p picture) as the next video frame.
    func writeVideo(_ frame: Frame) throws(MediaError) {
        frame.pointer.pointee.pts = Int64(videoFrames)
        frame.pointer.pointee.pict_type = AV_PICTURE_TYPE_NONE
        try call.check(avcodec_send_frame(video.pointer, frame.pointer), "avcodec_send_frame")
        videoFrames += 1
        try drain(video, into: videoStream)
    }

    /// Encodes `frame` (samples in the encoder's format and layout) as the next audio frame.
    func writeAudio(_ frame: Frame) throws(MediaError) {
        frame.pointer.pointee.pts = Int64(audioSamples)
        try call.check(avcodec_send_frame(audio.pointer, frame.pointer), "avcodec_send_frame")
        audioSamples += Int(frame.pointer.pointee.nb_samples)
        try drain(audio, into: audioStream)
    }

    /// Flushes both encoders and writes the trailer (the playlist gains #EXT-X-ENDLIST); returns every segment's
    /// duration.
    func finish() throws(MediaError) -> [Double] {
        try call.check(avcodec_send_frame(video.pointer, nil), "avcodec_send_frame")
        try drain(video, into: videoStream)
        try call.check(avcodec_send_frame(audio.pointer, nil), "avcodec_send_frame")
        try drain(audio, into: audioStream)
        try call.check(av_write_trailer(output.pointer), "av_write_trailer")
        let text = readPlaylist()
        guard text.contains("#EXT-X-ENDLIST") else {
            throw call.failure("av_write_trailer", "the clip's playlist was not finished", .engine)
        }
        segments = Self.durations(in: text)
        return segments
    }

    /// Calls `onSegment` for each segment the playlist lists that was not reported yet.
    func report(_ onSegment: (Int, Double) -> Void) {
        while reported < segments.count {
            onSegment(reported, segments[reported])
            reported += 1
        }
    }

    // MARK: - Steps

    private func drain(_ encoder: CodecContext, into stream: UnsafeMutablePointer<AVStream>) throws(MediaError) {
        let context = encoder.pointer
        while true {
            let rc = avcodec_receive_packet(context, packet.pointer)
            if rc == CFFmpeg_AVERROR_EAGAIN() || rc == CFFmpeg_AVERROR_EOF() { return }
            try call.check(rc, "avcodec_receive_packet")
            av_packet_rescale_ts(packet.pointer, context.pointee.time_base, stream.pointee.time_base)
            packet.pointer.pointee.stream_index = stream.pointee.index
            let isVideo = stream == videoStream
            try call.check(av_interleaved_write_frame(output.pointer, packet.pointer), "av_interleaved_write_frame")
            // The muxer rewrites the playlist when a keyframe closes a segment; that keyframe may reach it a
            // little after it was handed over (interleaving), so every video packet looks.
            if isVideo { segments = Self.durations(in: readPlaylist()) }
        }
    }

    private func readPlaylist() -> String {
        (try? String(contentsOfFile: playlistPath, encoding: .utf8)) ?? ""
    }

    /// The #EXTINF durations of an HLS playlist, in order.
    static func durations(in playlist: String) -> [Double] {
        playlist.split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("#EXTINF:") else { return nil }
            return Double(line.dropFirst("#EXTINF:".count).prefix { $0 != "," })
        }
    }

    private static func addStream(_ output: FormatOutput, for encoder: CodecContext,
                                  call: FFmpegCall) throws(MediaError) -> UnsafeMutablePointer<AVStream> {
        let stream = try call.require(avformat_new_stream(output.pointer, nil), "avformat_new_stream")
        try call.check(avcodec_parameters_from_context(stream.pointee.codecpar, encoder.pointer),
                       "avcodec_parameters_from_context")
        stream.pointee.time_base = encoder.pointer.pointee.time_base
        return stream
    }

    private static func videoEncoder(_ settings: TapeFormat, effort: TapeClipRequest.Effort,
                                     call: FFmpegCall) throws(MediaError) -> CodecContext {
        guard let codec = avcodec_find_encoder_by_name("libx264") else {
            throw call.failure("avcodec_find_encoder_by_name", "no libx264 encoder in this FFmpeg", .engine)
        }
        let encoder = try CodecContext(codec: codec, call: call)
        let context = encoder.pointer
        context.pointee.width = Int32(settings.width)
        context.pointee.height = Int32(settings.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.framesPerSecond))
        context.pointee.framerate = AVRational(num: Int32(settings.framesPerSecond), den: 1)
        // Every segment starts on a keyframe at a fixed interval, and decodes without the one before it.
        context.pointee.gop_size = Int32(settings.keyframeInterval)
        context.pointee.keyint_min = Int32(settings.keyframeInterval)
        context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER() | CFFmpeg_AV_CODEC_FLAG_CLOSED_GOP()
        context.pointee.color_range = AVCOL_RANGE_MPEG
        // swscale writes YUV with the BT.601 matrix (`Scaler`); saying so keeps players from assuming BT.709.
        context.pointee.colorspace = AVCOL_SPC_SMPTE170M
        let interval = settings.keyframeInterval
        var parameters = "keyint=\(interval):min-keyint=\(interval):scenecut=0:open-gop=0"
        let preset: String
        switch effort {
        case .urgent:
            // Fast, but with veryfast's parameter sets: every clip of a tape must share one SPS and PPS, or the
            // single file (one sample description) and players that keep the first init segment break. So
            // superfast (the same header choices as veryfast) with the cheaper searches, none of which shows
            // in a header; ultrafast would drop CABAC, 8x8 transforms and B-frames, all in the headers.
            preset = "superfast"
            parameters += ":partitions=none:subme=0:b-adapt=0"
            context.pointee.thread_count = 0
        case .background(let threads):
            // A shorter frame lookahead than veryfast's 10: each frame x264 holds is a dozen megabytes at 1080p.
            // (Holding none for the threads' sake, sync-lookahead=0, saved more but slowed the encoder markedly.)
            preset = "veryfast"
            parameters += ":rc-lookahead=3"
            context.pointee.thread_count = Int32(max(0, threads))
        }
        try encoder.open(options: ["preset": preset, "crf": "21", "x264-params": parameters])
        return encoder
    }

    private static func audioEncoder(_ settings: TapeFormat, call: FFmpegCall) throws(MediaError) -> CodecContext {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw call.failure("avcodec_find_encoder", "no AAC encoder in this FFmpeg", .engine)
        }
        let encoder = try CodecContext(codec: codec, call: call)
        let context = encoder.pointer
        context.pointee.sample_fmt = codec.pointee.sample_fmts?.pointee ?? AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(settings.audioSampleRate)
        av_channel_layout_default(&context.pointee.ch_layout, Int32(settings.audioChannels))
        context.pointee.bit_rate = 64_000 * Int64(settings.audioChannels)
        context.pointee.time_base = AVRational(num: 1, den: Int32(settings.audioSampleRate))
        context.pointee.flags |= CFFmpeg_AV_CODEC_FLAG_GLOBAL_HEADER()
        try encoder.open()
        return encoder
    }
}
