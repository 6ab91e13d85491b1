import CFFmpeg
import Glibc
import Synchronization

/// Asks an engine call in progress on another thread to stop: FFmpeg's I/O (its interrupt callback) and cairn's
/// decode and encode loops check it, and the call then fails as `interrupted`. A timed-out pipeline phase
/// interrupts its work this way, so the work returns and its lane slot frees, instead of running on unseen.
/// Decoders without a hook (libheif, libjxl, LibRaw's demosaic) finish their current call first.
public final class MediaInterrupt: Sendable {
    private let flag = Atomic<Bool>(false)

    public init() {}

    public func interrupt() { flag.store(true, ordering: .releasing) }

    public var isInterrupted: Bool { flag.load(ordering: .acquiring) }

    /// Runs `body` with `interrupt` as this thread's current one (engine calls run on the caller's thread).
    static func during<T>(_ interrupt: MediaInterrupt?, _ body: () throws(MediaError) -> T) throws(MediaError) -> T {
        guard let interrupt else { return try body() }
        let previous = pthread_getspecific(currentKey)
        pthread_setspecific(currentKey, Unmanaged.passUnretained(interrupt).toOpaque())
        defer { pthread_setspecific(currentKey, previous) }
        return try body()
    }

    /// The interrupt of the engine call running on this thread, if it has one.
    static var current: MediaInterrupt? {
        pthread_getspecific(currentKey).map { Unmanaged<MediaInterrupt>.fromOpaque($0).takeUnretainedValue() }
    }
}

private let currentKey: pthread_key_t = {
    var key = pthread_key_t()
    let rc = pthread_key_create(&key, nil)
    precondition(rc == 0, "pthread_key_create: \(rc)")
    return key
}()

/// FFmpeg's interrupt callback (`AVIOInterruptCB`): called on the thread doing the I/O, which is the engine
/// call's own; non-zero stops the blocking operation with AVERROR_EXIT.
let ffmpegInterruptCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { _ in
    MediaInterrupt.current?.isInterrupted == true ? 1 : 0
}

extension FFmpegCall {
    /// Throws `interrupted` when the engine call this belongs to was asked to stop.
    func checkInterrupt() throws(MediaError) {
        if MediaInterrupt.current?.isInterrupted == true {
            throw failure("interrupt", "interrupted (the phase timed out or the run is stopping)", .interrupted)
        }
    }
}
