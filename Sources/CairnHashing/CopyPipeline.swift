import CLinux
import CairnCore
import Glibc

/// A big file's copy with its reading and hashing on the calling thread and its writing on another, a chunk
/// apart: on a CPU whose SHA1 is slower than the kernel's copy, the hash and the disk writes then overlap instead
/// of adding up. Each chunk is read once into a buffer; the bytes hashed are the bytes written.
///
/// The buffers go round a ring: the reader takes a free one (`free`), fills and hashes it, hands it to the writer
/// (`filled`), which writes it, starts its writeback, and gives it back. The semaphores order every hand-off.
/// The writer is a job on the blocking pool, which the copy itself runs on: when the reader would wait for a
/// buffer and the writer has not started (every pool thread busy, perhaps with copies waiting like this one), the
/// reader takes the writer's part and copies on alone, so a full pool never deadlocks.
final class CopyPipeline: @unchecked Sendable {
    static let chunkSize = 1 << 20
    static let slotCount = 4

    /// Who writes the chunks: the job on the pool, or the reader itself; decided once.
    private enum Writer { case undecided, pool, reader }

    private let buffers: [UnsafeMutableRawBufferPointer]
    private let free = BlockingPool.Semaphore(value: CopyPipeline.slotCount)
    private let filled = BlockingPool.Semaphore(value: 0)
    private let writerEnded = BlockingPool.Semaphore(value: 0)
    private let writer = Locked(Writer.undecided)
    /// Byte counts of the chunks handed over, in ring order; 0 ends the copy.
    private let handedOver = Locked<[Int]>([])
    private let writeError = Locked<SystemCallError?>(nil)
    /// The next buffer to write; only the one writer touches it.
    private var writeSlot = 0
    private var writeback = Writeback()
    private let output: Int32
    private let destinationPath: String

    init(output: Int32, destinationPath: String) {
        self.output = output
        self.destinationPath = destinationPath
        buffers = (0..<Self.slotCount).map { _ in .allocate(byteCount: Self.chunkSize, alignment: 4096) }
    }

    deinit { for buffer in buffers { buffer.deallocate() } }

    /// Queues the writer on the pool.
    func start() {
        BlockingPool.submit { [self] in
            guard claimWriter(.pool) else { return }
            writeLoop()
            writerEnded.signal()
        }
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
        var writesItself = false
        reading: while remaining > 0, failure == nil, writeError.withLock({ $0 }) == nil {
            if writesItself {
                writeHandedOver()
            } else if !free.tryWait() {
                if claimWriter(.reader) {
                    writesItself = true
                    writeHandedOver()
                } else {
                    free.wait()
                }
            }
            let buffer = buffers[slot]
            let count: Int
            switch SystemCall.result({ read(input, buffer.baseAddress, Int(min(Int64(Self.chunkSize), remaining))) }) {
            case .success(let read): count = read
            case .failure(let code):
                failure = .system(SystemCallError("read", path: path, code: code))
                if !writesItself { free.signal() }
                break reading
            }
            if count == 0 { if !writesItself { free.signal() }; break }
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if header.count < headerLength { header.append(contentsOf: block.prefix(headerLength - header.count)) }
            do { try digest.update(block) } catch {
                failure = .openSSL(path: path, error)
                if !writesItself { free.signal() }
                break
            }
            remaining -= Int64(count)
            handedOver.withLock { $0.append(count) }
            if !writesItself { filled.signal() }
            slot = (slot + 1) % Self.slotCount
        }
        if writesItself || claimWriter(.reader) {
            writeHandedOver()
        } else {
            handedOver.withLock { $0.append(0) }
            filled.signal()
            writerEnded.wait()
        }
        if let failure { throw failure }
        if let error = writeError.withLock({ $0 }) { throw .system(error) }
        do { return (try digest.finalize(), header) } catch { throw .openSSL(path: path, error) }
    }

    /// Takes the writer's part for `who`, unless the other took it first.
    private func claimWriter(_ who: Writer) -> Bool {
        writer.withLock { writer in
            guard writer == .undecided else { return writer == who }
            writer = who
            return true
        }
    }

    /// The pool's writer: writes each chunk handed over, in order, until the 0 that ends the copy.
    private func writeLoop() {
        while true {
            filled.wait()
            let count = handedOver.withLock { $0.removeFirst() }
            if count == 0 { break }
            write(count)
            free.signal()
        }
    }

    /// The reader as its own writer: writes what is handed over and not yet written.
    private func writeHandedOver() {
        while let count = handedOver.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { write(count) }
    }

    private func write(_ count: Int) {
        defer { writeSlot = (writeSlot + 1) % Self.slotCount }
        guard writeError.withLock({ $0 }) == nil else { return }
        do {
            try writeFully(output, UnsafeRawBufferPointer(rebasing: buffers[writeSlot][0..<count]), path: destinationPath)
            writeback.wrote(count, to: output)
        } catch {
            writeError.withLock { $0 = error }
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
