import CairnCore
import CFFmpeg
import Foundation

/// Joins a tape's clips into one MP4 (moov first, so it plays while it downloads) by copying their packets: nothing
/// is decoded or encoded again. Each clip is its init segment followed by its media segments, read as one
/// fragmented MP4 through FFmpeg's `concat:` protocol; its timestamps, which start again at zero in every clip,
/// are moved to follow the clips before it.
public enum TapeMovieWriter {
    /// One clip: its folder (`init.mp4`, `seg-00000.m4s`, ...), how many of its segments to take, and how long
    /// they last (the sum of their playlist durations), which places the next clip.
    public struct Piece: Sendable, Equatable {
        public var folder: String
        public var segments: Int
        public var seconds: Double

        public init(folder: String, segments: Int, seconds: Double) {
            self.folder = folder
            self.segments = segments
            self.seconds = seconds
        }

        var concatURL: String {
            let files = [TapeClipRequest.initName] + (0..<segments).map(TapeClipRequest.segmentName)
            return "concat:" + files.map { folder + "/" + $0 }.joined(separator: "|")
        }
    }

    /// Writes `pieces` into `path` (through a temporary name beside it, renamed at the end).
    public static func join(_ pieces: [Piece], into path: String) throws(MediaError) {
        let call = FFmpegCall(file: path)
        guard !pieces.isEmpty else { throw call.failure("join", "the tape has no clip to join", .corrupt) }
        if let piece = pieces.first(where: { $0.folder.contains("|") }) {
            throw call.failure("join", "a clip's folder holds a '|', which FFmpeg's concat: reads as a separator: \(piece.folder)", .unsupported)
        }
        let temporary = path + ".partial"
        do {
            try write(pieces, to: temporary, call: call)
        } catch {
            _ = SystemCall.result { unlink(temporary) }
            throw error
        }
        if case .failure(let code) = SystemCall.result({ rename(temporary, path) }) {
            _ = SystemCall.result { unlink(temporary) }
            throw call.failure("rename", "cannot move the joined file into place: \(code)", .io)
        }
    }

    private static func write(_ pieces: [Piece], to path: String, call: FFmpegCall) throws(MediaError) {
        let output = try FormatOutput(path: path, call: call)
        var outputStreams: [AVMediaType: UnsafeMutablePointer<AVStream>] = [:]
        var lastDTS: [Int32: Int64] = [:]
        var startSeconds = 0.0
        try withPacket(call) { (packet) throws(MediaError) in
            for (index, piece) in pieces.enumerated() {
                let input = try FormatInput(path: piece.concatURL, probeBytes: 1 << 20, analyzeMicroseconds: 0,
                                            call: FFmpegCall(file: piece.folder))
                if index == 0 {
                    outputStreams = try addStreams(from: input, to: output, call: call)
                    try output.open(path: path)
                    var options: OpaquePointer? = nil
                    defer { av_dict_free(&options) }
                    try call.check(av_dict_set(&options, "movflags", "+faststart", 0), "av_dict_set")
                    try call.check(avformat_write_header(output.pointer, &options), "avformat_write_header")
                }
                while true {
                    try call.checkInterrupt()
                    let rc = av_read_frame(input.pointer, packet)
                    if rc == CFFmpeg_AVERROR_EOF() { break }
                    try call.check(rc, "av_read_frame")
                    defer { av_packet_unref(packet) }
                    let source = input.stream(Int(packet.pointee.stream_index))
                    guard let target = outputStreams[source.pointee.codecpar.pointee.codec_type] else { continue }
                    av_packet_rescale_ts(packet, source.pointee.time_base, target.pointee.time_base)
                    let offset = Int64((startSeconds * Double(target.pointee.time_base.den)
                                        / Double(target.pointee.time_base.num)).rounded())
                    shift(packet, by: offset, after: &lastDTS[target.pointee.index])
                    packet.pointee.stream_index = target.pointee.index
                    packet.pointee.pos = -1
                    try call.check(av_interleaved_write_frame(output.pointer, packet), "av_interleaved_write_frame")
                }
                startSeconds += piece.seconds
            }
        }
        try call.check(av_write_trailer(output.pointer), "av_write_trailer")
        try output.close()
    }

    /// One output stream per kind (video, audio) of the first clip, with its codec's parameters: every clip of a
    /// tape has the same format.
    private static func addStreams(from input: FormatInput, to output: FormatOutput, call: FFmpegCall) throws(MediaError)
        -> [AVMediaType: UnsafeMutablePointer<AVStream>]
    {
        var streams: [AVMediaType: UnsafeMutablePointer<AVStream>] = [:]
        for index in 0..<input.streamCount {
            let source = input.stream(index)
            let type = source.pointee.codecpar.pointee.codec_type
            guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO, streams[type] == nil else { continue }
            let stream = try call.require(avformat_new_stream(output.pointer, nil), "avformat_new_stream")
            try call.check(avcodec_parameters_copy(stream.pointee.codecpar, source.pointee.codecpar), "avcodec_parameters_copy")
            stream.pointee.codecpar.pointee.codec_tag = 0
            stream.pointee.time_base = source.pointee.time_base
            streams[type] = stream
        }
        guard streams[AVMEDIA_TYPE_VIDEO] != nil else { throw call.failure("join", "the first clip has no video", .corrupt) }
        return streams
    }

    /// Moves a packet `offset` later, keeping its stream's decoding times strictly increasing (an AAC clip's first
    /// packet may start a few samples before zero, where the clip before it ended).
    private static func shift(_ packet: UnsafeMutablePointer<AVPacket>, by offset: Int64, after last: inout Int64?) {
        let none = CFFmpeg_AV_NOPTS_VALUE()
        if packet.pointee.pts != none { packet.pointee.pts += offset }
        if packet.pointee.dts != none { packet.pointee.dts += offset } else { packet.pointee.dts = packet.pointee.pts }
        if let previous = last, packet.pointee.dts <= previous {
            packet.pointee.dts = previous + 1
            if packet.pointee.pts != none && packet.pointee.pts < packet.pointee.dts { packet.pointee.pts = packet.pointee.dts }
        }
        last = packet.pointee.dts
    }
}
