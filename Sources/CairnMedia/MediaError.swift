import CairnCore
import CFFmpeg
import Foundation
import SystemPackage

/// Why a media operation on one file failed, in one line.
public struct MediaError: FailureDescribing, CustomStringConvertible, Sendable, Equatable, Codable {
    /// What failed and why, without the file (the holder of the error names it).
    public var failure: FailureReason { FailureReason(operation: operation, reason, category: failureCategory) }

    /// The run's category of this failure: the decoder's verdict, and for the system's failures the errno that
    /// FFmpeg carried (`AVERROR(e)` is `-e`).
    public var failureCategory: FailureCategory {
        switch category {
        case .corrupt: return .corrupt
        case .unsupported, .tooLarge: return .unsupported
        case .unreadable, .io:
            guard let code, code < 0, code > -4096 else { return category == .io ? .io : .notFound }
            return FailureCategory(Errno(rawValue: -code))
        case .engine, .interrupted: return .other
        }
    }

    /// What sort of failure this is; decides whether trying again can help.
    public enum Category: String, Codable, Sendable {
        /// The bytes are damaged, truncated, empty or not what the name says.
        case corrupt
        /// A format or codec this build of FFmpeg cannot read (HEIC on FFmpeg 5.1, for example).
        case unsupported
        /// Dimensions or work beyond the configured caps (a 65535x65535 header in a few KB).
        case tooLarge
        /// The file is missing, not a regular file, or not readable by this user.
        case unreadable
        /// A transient I/O-like failure (EIO, EAGAIN, ENOMEM, a full disk): worth retrying.
        case io
        /// A failure of the engine itself (an encoder refused its parameters).
        case engine
        /// Stopped on request (``MediaInterrupt``): a timed-out phase or a stopping run; worth retrying.
        case interrupted
    }

    /// The FFmpeg call or engine step that failed, e.g. `avcodec_send_packet`.
    public let operation: String
    /// Human-readable reason: `av_strerror` text for FFmpeg codes, or the engine's explanation.
    public let reason: String
    /// The file the operation was working on.
    public let file: String
    public let category: Category
    /// The FFmpeg return code, when the failure came from one.
    public let code: Int32?

    public init(operation: String, reason: String, file: String, category: Category, code: Int32? = nil) {
        self.operation = operation
        self.reason = reason
        self.file = file
        self.category = category
        self.code = code
    }

    /// Only transient I/O-like failures are worth retrying; corrupt, unsupported or absurd input never is.
    public var isRetryable: Bool { category == .io || category == .interrupted }

    public var description: String { "\(file): \(operation): \(reason)" }
}

/// The one funnel every FFmpeg return code passes through.
struct FFmpegCall {
    /// The file every error raised through this funnel names.
    let file: String

    /// Returns `rc` when it is not negative; otherwise throws a ``MediaError`` for `operation`.
    @discardableResult
    func check(_ rc: Int32, _ operation: String) throws(MediaError) -> Int32 {
        if rc >= 0 { return rc }
        throw error(rc, operation)
    }

    /// Returns `pointer` or throws when an allocating call gave back NULL.
    func require<T>(_ pointer: T?, _ operation: String) throws(MediaError) -> T {
        guard let pointer else {
            throw MediaError(operation: operation, reason: "out of memory", file: file, category: .io,
                             code: CFFmpeg_AVERROR(ENOMEM))
        }
        return pointer
    }

    /// Refuses a picture with no dimensions, or more pixels than `cap` (a few KB of header may claim
    /// 65535x65535: it fails here, before any buffer is allocated).
    func checkPixels(_ width: Int, _ height: Int, cap: Int, operation: String) throws(MediaError) {
        guard width > 0, height > 0 else { throw failure(operation, "picture has no dimensions", .corrupt) }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= cap else {
            throw failure(operation, "picture claims \(width)x\(height) pixels, above the cap of \(cap)", .tooLarge)
        }
    }

    /// The typed error for an FFmpeg return code.
    func error(_ rc: Int32, _ operation: String) -> MediaError {
        MediaError(operation: operation, reason: Self.describe(rc), file: file,
                   category: Self.category(of: rc), code: rc)
    }

    /// An error raised by the engine's own checks rather than an FFmpeg call.
    func failure(_ operation: String, _ reason: String, _ category: MediaError.Category) -> MediaError {
        MediaError(operation: operation, reason: reason, file: file, category: category)
    }

    static func describe(_ rc: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(CFFmpeg_AV_ERROR_MAX_STRING_SIZE()))
        if av_strerror(rc, &buffer, buffer.count) < 0 { return "FFmpeg error \(rc)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func category(of rc: Int32) -> MediaError.Category {
        switch rc {
        case CFFmpeg_AVERROR_DECODER_NOT_FOUND(), CFFmpeg_AVERROR_DEMUXER_NOT_FOUND(),
             CFFmpeg_AVERROR_PATCHWELCOME(), CFFmpeg_AVERROR_STREAM_NOT_FOUND():
            return .unsupported
        case CFFmpeg_AVERROR_ENCODER_NOT_FOUND():
            return .engine
        case CFFmpeg_AVERROR_EXIT():
            return .interrupted  // the interrupt callback said stop
        default:
            break
        }
        switch CFFmpeg_AVUNERROR(rc) {
        case EIO, EAGAIN, EINTR, ENOMEM, ETIMEDOUT, EMFILE, ENFILE, ENOSPC, EBUSY, ESTALE:
            return .io
        case ERANGE, E2BIG:
            return .tooLarge
        default:
            return .corrupt
        }
    }
}
