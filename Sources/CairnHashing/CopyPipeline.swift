import CLinux
import CairnCore
import Dispatch
import Glibc

/// A big file's copy with its reading and hashing on the calling thread and its writing on another, a chunk
/// apart: on a CPU whose SHA1 is slower than the kernel's copy, the hash and the disk writes then overlap instead
/// of adding up. Each chunk is read once into a buffer; the bytes hashed are the bytes written.
///
/// The buffers go round a ring: the reader takes a free one (`free`), fills and hashes it, hands it to the writer
/// (`filled`), which writes it, starts its writeback, and gives it back. The semaphores order every hand-off.
/// The writer is a thread of its own, not a Dispatch worker: the copy itself runs on one, and a pool whose
/// workers all wait on their writers could not start them.
final class CopyPipeline: @unchecked Sendable {
    static let chunkSize = 1 << 20
    static let slotCount = 4

    private let buffers: [UnsafeMutableRawBufferPointer]
    private let free = DispatchSemaphore(value: CopyPipeline.slotCount)
    private let filled = DispatchSemaphore(value: 0)
    private var writer = pthread_t()
    /// Byte counts of the chunks handed over, in ring order; 0 ends the copy.
    private let handedOver = Locked<[Int]>([])
    private let writeError = Locked<SystemCallError?>(nil)
    private let output: Int32
    private let destinationPath: String

    init(output: Int32, destinationPath: String) {
        self.output = output
        self.destinationPath = destinationPath
        buffers = (0..<Self.slotCount).map { _ in .allocate(byteCount: Self.chunkSize, alignment: 4096) }
    }

    deinit { for buffer in buffers { buffer.deallocate() } }

    /// Starts the writer thread; false when the system has no thread to give (then copy on one thread).
    func start() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&writer, nil, { context in
            let pipeline = Unmanaged<CopyPipeline>.fromOpaque(context!).takeRetainedValue()
            pipeline.writeLoop()
            return nil
        }, context)
        if created != 0 { Unmanaged<CopyPipeline>.fromOpaque(context).release() }
        return created == 0
    }

    /// Reads `size` bytes of `input` (no more: a growing file is not chased), hashes them with `digest` and writes
    /// them to the output; returns the checksum and the first `headerLength` bytes. Call once, after `start`.
    func run(input: Int32, size: Int64, path: String, digest: SHA1Digest, headerLength: Int) throws(HashingError)
        -> (Checksum, [UInt8])
    {
        var header: [UInt8] = []
        var remaining = size
        var slot = 0
        var failure: HashingError?
        while remaining > 0, failure == nil, writeError.withLock({ $0 }) == nil {
            free.wait()
            let buffer = buffers[slot]
            let count = read(input, buffer.baseAddress, Int(min(Int64(Self.chunkSize), remaining)))
            if count < 0 {
                if errno == EINTR { free.signal(); continue }
                failure = .system(SystemCallError("read", path: path))
                free.signal()
                break
            }
            if count == 0 { free.signal(); break }
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if header.count < headerLength { header.append(contentsOf: block.prefix(headerLength - header.count)) }
            do { try digest.update(block) } catch {
                failure = .openSSL(path: path, error)
                free.signal()
                break
            }
            remaining -= Int64(count)
            handedOver.withLock { $0.append(count) }
            filled.signal()
            slot = (slot + 1) % Self.slotCount
        }
        handedOver.withLock { $0.append(0) }
        filled.signal()
        pthread_join(writer, nil)
        if let failure { throw failure }
        if let error = writeError.withLock({ $0 }) { throw .system(error) }
        do { return (try digest.finalize(), header) } catch { throw .openSSL(path: path, error) }
    }

    private func writeLoop() {
        var slot = 0
        var writeback = Writeback()
        while true {
            filled.wait()
            let count = handedOver.withLock { $0.removeFirst() }
            if count == 0 { break }
            if writeError.withLock({ $0 }) == nil {
                do {
                    try writeFully(output, UnsafeRawBufferPointer(rebasing: buffers[slot][0..<count]), path: destinationPath)
                    writeback.wrote(count, to: output)
                } catch {
                    writeError.withLock { $0 = error }
                }
            }
            free.signal()
            slot = (slot + 1) % Self.slotCount
        }
    }
}

/// Starts the disk writes of a file being written, every `FileHasher.writebackChunk` bytes, as it goes.
struct Writeback {
    private var written: Int64 = 0
    private var started: Int64 = 0

    /// `count` more bytes went to `fd`; starts the writeback of the last chunk once it is whole.
    mutating func wrote(_ count: Int, to fd: Int32) {
        written += Int64(count)
        guard written - started >= FileHasher.writebackChunk else { return }
        _ = CLinux_start_writeback(fd, started, written - started)
        started = written
    }
}
