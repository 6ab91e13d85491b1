import CairnArchive
import CairnCore
import Glibc

/// An entry of an archive read in place (`<archive>/<entry>`): hashed, copied or read whole as a file is, its
/// bytes streamed out of the archive. Its stat facts are the archive's (device, inode, modification time) with the
/// entry's own size, so an archive that changed since the walk is caught as a file that changed would be.
extension FileHasher {
    /// The archive entry `path` names, when opening it as a file failed because a folder of it is a file.
    static func archiveEntry(_ path: String, after error: HashingError) -> (archive: String, entry: String)? {
        // A folder of the path is a file (an archive), or is not there at all (the folder of a split archive's parts).
        guard case .system(let failure) = error, failure.code == .notDirectory || failure.code == .noSuchFileOrDirectory
        else { return nil }
        return SourceArchive.split(path)
    }

    func hashEntry(_ location: (archive: String, entry: String), path: String, expected: FileFingerprint?)
        throws(HashingError) -> HashedFile
    {
        let (checksum, header, fingerprint) = try streamEntry(location, path: path, expected: expected) { _ throws(HashingError) in }
        return HashedFile(checksum: checksum, fingerprint: fingerprint, header: FileHeader(header))
    }

    func copyEntry(_ location: (archive: String, entry: String), path: String, to destination: String,
                   expected: Checksum?, syncs: Bool) throws(HashingError) -> HashedFile {
        let output: Int32
        do {
            output = try SystemCall.result { open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
                .get("open for writing", destination)
        } catch { throw .system(error) }
        var succeeded = false
        defer {
            close(output)
            if !succeeded { unlink(destination) }
        }
        let (checksum, header, fingerprint) = try streamEntry(location, path: path, expected: nil) { block throws(HashingError) in
            do throws(SystemCallError) { try writeFully(output, block, path: destination) } catch { throw .system(error) }
        }
        if let expected, expected != checksum { throw .checksumMismatch(path: path, expected: expected, actual: checksum) }
        if syncs {
            do { try SystemCall.result { fsync(output) }.get("fsync", destination) } catch { throw .system(error) }
        }
        succeeded = true
        return HashedFile(checksum: checksum, fingerprint: fingerprint, header: FileHeader(header))
    }

    func readWholeEntry(_ location: (archive: String, entry: String), path: String, expected: Checksum?)
        throws(HashingError) -> [UInt8]
    {
        var bytes: [UInt8] = []
        let (checksum, _, _) = try streamEntry(location, path: path, expected: nil) { block throws(HashingError) in
            bytes.append(contentsOf: block)
        }
        if let expected, expected != checksum { throw .checksumMismatch(path: path, expected: expected, actual: checksum) }
        return bytes
    }

    /// Streams the entry through the digest and `each`, checking the archive did not change meanwhile (nor since
    /// the walk, against `expected`).
    private func streamEntry(
        _ location: (archive: String, entry: String), path: String, expected: FileFingerprint?,
        _ each: (UnsafeRawBufferPointer) throws(HashingError) -> Void
    ) throws(HashingError) -> (Checksum, [UInt8], FileFingerprint) {
        if interrupt?.isInterrupted == true { throw .interrupted(path: path) }
        let before = try archiveFacts(location.archive)
        if let expected, !Self.sameArchive(expected, before) { throw .changedWhileReading(path: path) }
        do { try digest.reset() } catch { throw .openSSL(path: path, error) }
        var header: [UInt8] = []
        let count: Int64
        do {
            count = try SourceArchive.read(location.archive, entry: location.entry) { block in
                if interrupt?.isInterrupted == true { throw HashingError.interrupted(path: path) }
                if header.count < Self.headerLength { header.append(contentsOf: block.prefix(Self.headerLength - header.count)) }
                do throws(OpenSSLError) { try digest.update(block) } catch { throw HashingError.openSSL(path: path, error) }
                try each(block)
            }
        } catch let error as HashingError {
            throw error
        } catch let error as ArchiveError {
            throw .archive(error)
        } catch {
            throw .archive(ArchiveError(archive: location.archive, entry: location.entry, reason: "\(error)"))
        }
        let after = try archiveFacts(location.archive)
        guard Self.sameArchive(before, after) else { throw .changedWhileReading(path: path) }
        if let expected, expected.size != count { throw .changedWhileReading(path: path) }
        let checksum: Checksum
        do { checksum = try digest.finalize() } catch { throw .openSSL(path: path, error) }
        var fingerprint = before
        fingerprint.size = count
        return (checksum, header, fingerprint)
    }

    /// The archive's stat facts (never through a link).
    private func archiveFacts(_ archive: String) throws(HashingError) -> FileFingerprint {
        var info = stat()
        do { try SystemCall.result { lstat(archive, &info) }.get("stat", archive) } catch { throw .system(error) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegularFile(path: archive) }
        return FileFingerprint(info)
    }

    /// The same archive file, unchanged: the entry's size is the archive's business.
    private static func sameArchive(_ lhs: FileFingerprint, _ rhs: FileFingerprint) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.modificationTimeNanoseconds == rhs.modificationTimeNanoseconds
    }
}
