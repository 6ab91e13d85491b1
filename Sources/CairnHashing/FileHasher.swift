import CLinux
import CairnCore
import SystemPackage
import Glibc

/// What hashing a file found: its checksum, the stat facts it was read under, and its first bytes.
public struct HashedFile: Sendable, Equatable {
    public var checksum: Checksum
    public var fingerprint: FileFingerprint
    /// Up to the first 32 bytes, for recognising the format by its magic numbers.
    public var header: FileHeader
}

/// Up to the first 32 bytes of a file, held inline: a hashing run keeps one per file, and an array each
/// would be an allocation each.
public struct FileHeader: Sendable, Equatable {
    public static let capacity = 32
    private var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    public let count: Int

    public init(_ bytes: some Collection<UInt8>) {
        count = min(bytes.count, Self.capacity)
        withUnsafeMutableBytes(of: &storage) { raw in
            for (offset, byte) in bytes.prefix(Self.capacity).enumerated() { raw[offset] = byte }
        }
    }

    public var bytes: [UInt8] { withUnsafeBytes(of: storage) { Array($0.prefix(count)) } }

    public static func == (lhs: FileHeader, rhs: FileHeader) -> Bool { lhs.bytes == rhs.bytes }
}

/// Hashes files with SHA1: big ones straight from a memory mapping, small ones and copies in large reads.
///
/// Owns a page-aligned buffer and an EVP context, so a thread that keeps one allocates nothing per file.
public final class FileHasher {
    /// 128 KiB keeps the buffer in L2 (shared by a core's two hyperthreads) while the hash reads it straight
    /// after the kernel's copy; measured best of 64 KiB to 1 MiB with `cairn-bench hash --buffer-kib`.
    public static let defaultBufferSize = 128 * 1024
    /// Files from this size on are hashed from a mapping, which skips the kernel's copy out of the page cache;
    /// below it, one `read` costs less than `mmap` + `munmap`.
    public static let defaultMappingThreshold: Int64 = 512 * 1024
    /// Mapped and populated a window at a time, so a huge video never maps (or faults in) all at once.
    static let mappingWindow = 16 * 1024 * 1024
    static let headerLength = FileHeader.capacity
    /// A copy starts the disk writes of every this many bytes as it goes (a big video is on disk, or nearly, when
    /// its copy ends, not all in the page cache waiting for the sync).
    static let writebackChunk: Int64 = 8 * 1024 * 1024
    /// Copies from this size on hash and write on two threads (`CopyPipeline`); below it, a thread hop per file
    /// costs more than the overlap saves.
    static let pipelinedCopyThreshold: Int64 = 8 * 1024 * 1024

    private let mappingThreshold: Int64
    /// Checked before each file and each read or window: a set one ends the hash with `interrupted`.
    public var interrupt: Interrupt?

    private let buffer: UnsafeMutableRawBufferPointer
    let digest: SHA1Digest

    /// `mappingThreshold: nil` reads every file with `read`.
    public init(bufferSize: Int = FileHasher.defaultBufferSize,
                mappingThreshold: Int64? = FileHasher.defaultMappingThreshold) throws(OpenSSLError) {
        self.mappingThreshold = mappingThreshold ?? .max
        buffer = .allocate(byteCount: max(4096, bufferSize), alignment: 4096)
        do { digest = try SHA1Digest() } catch { buffer.deallocate(); throw error }
    }

    deinit { buffer.deallocate() }

    /// Hashes the file at `path`. Throws `changedWhileReading` when its stat facts moved during the read,
    /// or when they differ from `expected` (the facts the scanner saw). `dropsCache`: the file's pages leave the
    /// page cache once read (a folder bigger than memory would otherwise push out everything else).
    public func hash(path: String, expected: FileFingerprint? = nil, dropsCache: Bool = false) throws(HashingError)
        -> HashedFile
    {
        if interrupt?.isInterrupted == true { throw .interrupted(path: path) }
        let fd: Int32
        do { fd = try openForReading(path) } catch {
            guard let entry = Self.archiveEntry(path, after: error) else { throw error }
            return try hashEntry(entry, path: path, expected: expected)
        }
        defer {
            if dropsCache { _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED)) }
            close(fd)
        }
        let before = try fingerprint(of: fd, path: path)
        if let expected, expected != before { throw .changedWhileReading(path: path) }
        let (checksum, header) = before.size >= mappingThreshold
            ? try streamMapped(fd, size: before.size, path: path)
            : try stream(from: fd, size: before.size, path: path, to: nil, destinationPath: "")
        let after = try fingerprint(of: fd, path: path)
        guard after == before, stillAtPath(path, before) else { throw .changedWhileReading(path: path) }
        return HashedFile(checksum: checksum, fingerprint: before, header: FileHeader(header))
    }

    /// Copies `source` into a new file at `destination` while hashing it, so each byte is read once.
    ///
    /// The new file is fsynced before this returns, unless `syncs` is false (the caller makes it durable with
    /// others, in a group commit). On any failure the partial destination is removed. The source's pages leave
    /// the page cache afterwards (an import never reads a source file again): a big import does not push out
    /// what the machine had cached. The copy's pages stay, for the derivatives made from it next.
    /// When `expected` is given and the bytes read hash to something else, the copy is removed and
    /// `checksumMismatch` thrown: the file changed after it was hashed.
    public func copy(from source: String, to destination: String, expected: Checksum? = nil,
                     syncs: Bool = true) throws(HashingError) -> HashedFile {
        let input: Int32
        do { input = try openForReading(source) } catch {
            guard let entry = Self.archiveEntry(source, after: error) else { throw error }
            return try copyEntry(entry, path: source, to: destination, expected: expected, syncs: syncs)
        }
        defer {
            _ = posix_fadvise(input, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(input)
        }
        let before = try fingerprint(of: input, path: source)
        let output = try system(SystemCall.result { open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) },
                                "open for writing", destination)
        var succeeded = false
        defer {
            close(output)
            if !succeeded { unlink(destination) }
        }
        let (checksum, header): (Checksum, [UInt8])
        let pipeline = before.size >= Self.pipelinedCopyThreshold
            ? CopyPipeline(output: output, destinationPath: destination) : nil
        if pipeline != nil { do { try digest.reset() } catch { throw .openSSL(path: source, error) } }
        if let pipeline {
            pipeline.start()
            _ = posix_fadvise(input, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
            (checksum, header) = try pipeline.run(input: input, size: before.size, path: source, digest: digest,
                                                  headerLength: Self.headerLength)
        } else {
            (checksum, header) = try stream(from: input, size: before.size, path: source, to: output,
                                            destinationPath: destination)
        }
        let after = try fingerprint(of: input, path: source)
        guard after == before, stillAtPath(source, before) else { throw .changedWhileReading(path: source) }
        if let expected, expected != checksum {
            throw .checksumMismatch(path: source, expected: expected, actual: checksum)
        }
        if syncs { try system(SystemCall.result { fsync(output) }, "fsync", destination) }
        succeeded = true
        return HashedFile(checksum: checksum, fingerprint: before, header: FileHeader(header))
    }

    /// The whole file at `path` in memory, unchanged while it was read (opened as `hash` opens it: no link
    /// followed): a small file bound for a store, read once and sent from the same bytes. With `expected`, the
    /// bytes are checked to hash to it here; without, the store that receives them checks them.
    public func readWhole(path: String, expected: Checksum?) throws(HashingError) -> [UInt8] {
        let fd: Int32
        do { fd = try openForReading(path) } catch {
            guard let entry = Self.archiveEntry(path, after: error) else { throw error }
            return try readWholeEntry(entry, path: path, expected: expected)
        }
        defer {
            _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
            close(fd)
        }
        let before = try fingerprint(of: fd, path: path)
        var bytes = [UInt8](repeating: 0, count: Int(before.size))
        var filled = 0
        while filled < bytes.count {
            let result = bytes.withUnsafeMutableBytes { raw in
                SystemCall.result { pread(fd, raw.baseAddress! + filled, raw.count - filled, off_t(filled)) }
            }
            let count = try system(result, "read", path)
            guard count > 0 else { throw .changedWhileReading(path: path) }
            filled += count
        }
        let after = try fingerprint(of: fd, path: path)
        guard after == before, stillAtPath(path, before) else { throw .changedWhileReading(path: path) }
        guard let expected else { return bytes }
        let checksum: Checksum
        do { checksum = try SHA1Digest.checksum(of: bytes) } catch { throw .openSSL(path: path, error) }
        guard checksum == expected else { throw .checksumMismatch(path: path, expected: expected, actual: checksum) }
        return bytes
    }

    private func openForReading(_ path: String) throws(HashingError) -> Int32 {
        // No symbolic link anywhere along the path (the roots are resolved): a file, or a folder above it,
        // swapped for a link after the scan is refused, never followed out of the source.
        try system(SystemCall.result { CLinux_open_read_no_symlinks(path) }, "open", path)
    }

    /// Whether `path` still names the file that was read: one renamed over it meanwhile keeps the open one
    /// intact (its bytes hashed fine) but is not what the path now holds.
    private func stillAtPath(_ path: String, _ read: FileFingerprint) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return false }
        return UInt64(info.st_dev) == read.device && UInt64(info.st_ino) == read.inode
    }

    private func fingerprint(of fd: Int32, path: String) throws(HashingError) -> FileFingerprint {
        var info = stat()
        try system(SystemCall.result { fstat(fd, &info) }, "fstat", path)
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile(path: path) }
        return FileFingerprint(info)
    }

    /// Hashes `size` bytes of `fd` through read-only mappings, a window at a time, asking the kernel to read
    /// the next window ahead while this one is hashed. A page lost to a truncation is `changedWhileReading`.
    private func streamMapped(_ fd: Int32, size: Int64, path: String) throws(HashingError) -> (Checksum, [UInt8]) {
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        // The header by `pread`: a read of the mapping outside the digest's guard could fault.
        var header = [UInt8](repeating: 0, count: Self.headerLength)
        let headerCount = try system(
            header.withUnsafeMutableBytes { bytes in SystemCall.result { pread(fd, bytes.baseAddress, bytes.count, 0) } },
            "read", path)
        header.removeLast(header.count - headerCount)

        do { try digest.reset() } catch { throw .openSSL(path: path, error) }
        var offset: Int64 = 0
        while offset < size {
            if interrupt?.isInterrupted == true { throw .interrupted(path: path) }
            let length = Int(min(Int64(Self.mappingWindow), size - offset))
            if offset + Int64(length) < size {
                _ = posix_fadvise(fd, off_t(offset) + length, off_t(Self.mappingWindow), Int32(POSIX_FADV_WILLNEED))
            }
            let mapping = try system(SystemCall.pointer(failingAs: MAP_FAILED) {
                mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(offset))
            }, "mmap", path)
            defer { munmap(mapping, length) }
            let complete: Bool
            do { complete = try digest.updateMapped(UnsafeRawBufferPointer(start: mapping, count: length)) } catch {
                throw .openSSL(path: path, error)
            }
            guard complete else { throw .changedWhileReading(path: path) }
            offset += Int64(length)
        }
        do { return (try digest.finalize(), header) } catch { throw .openSSL(path: path, error) }
    }

    /// Reads `fd` to its end, hashing every block and writing it to `output` when one is given.
    /// Reads the `size` bytes the file had when opened, no more: a file that keeps growing (a recording in
    /// progress) is not chased; the fingerprint taken after the read reports the change.
    private func stream(from fd: Int32, size: Int64, path: String, to output: Int32?, destinationPath: String)
        throws(HashingError) -> (Checksum, [UInt8])
    {
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
        do { try digest.reset() } catch { throw .openSSL(path: path, error) }
        var header: [UInt8] = []
        var remaining = size
        var writeback = Writeback()
        while remaining > 0 {
            if interrupt?.isInterrupted == true { throw .interrupted(path: path) }
            let count = try system(SystemCall.result { read(fd, buffer.baseAddress, Int(min(Int64(buffer.count), remaining))) },
                                   "read", path)
            if count == 0 { break }
            remaining -= Int64(count)
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if header.count < Self.headerLength {
                header.append(contentsOf: block.prefix(Self.headerLength - header.count))
            }
            do { try digest.update(block) } catch { throw .openSSL(path: path, error) }
            if let output {
                try writeAll(block, to: output, path: destinationPath)
                writeback.wrote(count, to: output)
            }
        }
        do { return (try digest.finalize(), header) } catch { throw .openSSL(path: path, error) }
    }

    private func writeAll(_ block: UnsafeRawBufferPointer, to fd: Int32, path: String) throws(HashingError) {
        do { try writeFully(fd, block, path: path) } catch { throw .system(error) }
    }

    /// A system call's result, its failure as this type's error.
    @discardableResult
    private func system<T>(_ result: Result<T, Errno>, _ operation: String, _ path: String) throws(HashingError) -> T {
        do { return try result.get(operation, path) } catch { throw .system(error) }
    }
}
