import CFFmpeg

/// A resampler (`SwrContext`).
final class Resampler {
    let pointer: OpaquePointer

    /// Converts `input`'s samples to `format` at `rate` with `output`'s channel layout.
    init(input: Frame, output: UnsafeMutablePointer<AVChannelLayout>, format: AVSampleFormat, rate: Int,
         call: FFmpegCall) throws(MediaError) {
        var inputLayout = AVChannelLayout()
        defer { av_channel_layout_uninit(&inputLayout) }
        let source = input.pointer
        if source.pointee.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC || source.pointee.ch_layout.nb_channels <= 0 {
            // Some containers say only how many channels there are: take that count's usual layout.
            av_channel_layout_default(&inputLayout, max(1, source.pointee.ch_layout.nb_channels))
        } else {
            try call.check(av_channel_layout_copy(&inputLayout, &source.pointee.ch_layout), "av_channel_layout_copy")
        }
        var context: OpaquePointer? = nil
        try call.check(swr_alloc_set_opts2(&context, output, format, Int32(rate), &inputLayout,
                                           AVSampleFormat(rawValue: source.pointee.format), source.pointee.sample_rate,
                                           0, nil), "swr_alloc_set_opts2")
        pointer = try call.require(context, "swr_alloc_set_opts2")
        let rc = swr_init(pointer)
        if rc < 0 {
            var owned: OpaquePointer? = pointer
            swr_free(&owned)
            throw call.error(rc, "swr_init")
        }
    }

    deinit {
        var owned: OpaquePointer? = pointer
        swr_free(&owned)
    }
}

/// Feeds the AAC encoder: decoded source audio is resampled to the encoder's format into a FIFO, placed on
/// the clip's timeline (silence before a late start, leading samples dropped before an early one), and handed
/// over in whole encoder frames up to where the video has got. A clip without sound gets silence.
final class TapeAudioFeed {
    private let muxer: TapeMuxer
    private let call: FFmpegCall
    private let fifo: AudioFifo
    private var resampler: Resampler?
    private var started = false
    /// Leading source samples still to drop (the source's audio began before its video).
    private var pendingDrop = 0

    init(muxer: TapeMuxer) throws(MediaError) {
        self.muxer = muxer
        call = muxer.call
        let context = muxer.audio.pointer
        fifo = try AudioFifo(format: context.pointee.sample_fmt, channels: Int(context.pointee.ch_layout.nb_channels),
                             call: call)
    }

    /// Samples taken in but not yet encoded.
    var buffered: Int { fifo.count }

    /// Queues one decoded source frame whose first sample plays `seconds` after the clip's start (nil: unknown,
    /// right after the previous one).
    func push(_ frame: Frame, seconds: Double?) throws(MediaError) {
        let context = muxer.audio.pointer
        if resampler == nil {
            resampler = try Resampler(input: frame, output: &context.pointee.ch_layout, format: context.pointee.sample_fmt,
                                      rate: Int(context.pointee.sample_rate), call: call)
        }
        if !started, let seconds {
            started = true
            let offset = Int((seconds * Double(context.pointee.sample_rate)).rounded())
            if offset > 0 { try appendSilence(offset) } else { pendingDrop = -offset }
        }
        started = true
        let converted = try Frame(call: call)
        try call.check(av_channel_layout_copy(&converted.pointer.pointee.ch_layout, &context.pointee.ch_layout),
                       "av_channel_layout_copy")
        converted.pointer.pointee.format = context.pointee.sample_fmt.rawValue
        converted.pointer.pointee.sample_rate = context.pointee.sample_rate
        try call.check(swr_convert_frame(resampler!.pointer, converted.pointer, frame.pointer), "swr_convert_frame")
        guard converted.pointer.pointee.nb_samples > 0 else { return }
        try call.check(CFFmpeg_audio_fifo_write_frame(fifo.pointer, converted.pointer), "av_audio_fifo_write")
        if pendingDrop > 0 {
            let dropped = min(pendingDrop, fifo.count)
            try call.check(av_audio_fifo_drain(fifo.pointer, Int32(dropped)), "av_audio_fifo_drain")
            pendingDrop -= dropped
        }
    }

    /// Encodes whole frames while the FIFO has them, up to `limit` samples from the clip's start; with
    /// `silence`, first fills the FIFO with silence up to that point (a source without sound).
    func encode(upTo limit: Int, silence: Bool = false) throws(MediaError) {
        let size = muxer.audioFrameSize
        if silence {
            let missing = limit - muxer.audioSamples - fifo.count
            if missing > 0 { try appendSilence(missing) }
        }
        while fifo.count >= size, muxer.audioSamples + size <= limit {
            try encodeFrame(samples: size)
        }
    }

    /// Ends the audio exactly at `total` samples: pads with silence when short, drops what lies past it.
    func finish(total: Int) throws(MediaError) {
        let missing = total - muxer.audioSamples - fifo.count
        if missing > 0 { try appendSilence(missing) }
        let size = muxer.audioFrameSize
        while muxer.audioSamples < total {
            try encodeFrame(samples: min(size, total - muxer.audioSamples))
        }
    }

    private func encodeFrame(samples: Int) throws(MediaError) {
        let frame = try emptyFrame(samples: samples)
        try call.check(CFFmpeg_audio_fifo_read_frame(fifo.pointer, frame.pointer, Int32(samples)), "av_audio_fifo_read")
        try muxer.writeAudio(frame)
    }

    private func appendSilence(_ samples: Int) throws(MediaError) {
        var left = samples
        while left > 0 {
            let chunk = min(left, 4096)
            let frame = try emptyFrame(samples: chunk)
            try call.check(CFFmpeg_frame_set_silence(frame.pointer), "av_samples_set_silence")
            try call.check(CFFmpeg_audio_fifo_write_frame(fifo.pointer, frame.pointer), "av_audio_fifo_write")
            left -= chunk
        }
    }

    /// A frame with buffers for `samples` samples in the encoder's format and layout.
    private func emptyFrame(samples: Int) throws(MediaError) -> Frame {
        let context = muxer.audio.pointer
        let frame = try Frame(call: call)
        frame.pointer.pointee.nb_samples = Int32(samples)
        frame.pointer.pointee.format = context.pointee.sample_fmt.rawValue
        frame.pointer.pointee.sample_rate = context.pointee.sample_rate
        try call.check(av_channel_layout_copy(&frame.pointer.pointee.ch_layout, &context.pointee.ch_layout),
                       "av_channel_layout_copy")
        try call.check(av_frame_get_buffer(frame.pointer, 0), "av_frame_get_buffer")
        return frame
    }
}
