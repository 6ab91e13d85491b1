import CairnArchive
import CairnCore

/// Why a file could not be hashed or copied, naming the file.
public enum HashingError: FailureDescribing, CustomStringConvertible, Sendable {
    case system(SystemCallError)
    case notRegularFile(path: String)
    /// Size, modification time or inode moved while the file was being read: the bytes are not trustworthy.
    case changedWhileReading(path: String)
    /// The copy's checksum is not the one the file had when it was hashed.
    case checksumMismatch(path: String, expected: Checksum, actual: Checksum)
    case openSSL(path: String, OpenSSLError)
    /// The run is stopping (`Interrupt`): the file was not read to its end; the next run reads it.
    case interrupted(path: String)
    /// An entry of an archive read in place could not be read: the archive is damaged there, or unreadable.
    case archive(ArchiveError)

    public var description: String { "\(path): \(failure)" }

    /// What failed and why, without the file (the holder of the error names it).
    public var failure: FailureReason {
        switch self {
        case .system(let error): return error.failure
        case .notRegularFile: return "not a regular file"
        case .changedWhileReading: return "changed while it was being read; it will be read again next run"
        case .checksumMismatch(_, let expected, let actual):
            return FailureReason("content changed since it was hashed (expected \(expected), read \(actual))")
        case .openSSL(_, let error): return FailureReason(operation: "sha1", "\(error)")
        case .interrupted: return "not read: the run was stopping"
        case .archive(let error): return error.failure
        }
    }

    public var path: String {
        switch self {
        case .system(let error): return error.path
        case .notRegularFile(let path), .changedWhileReading(let path), .checksumMismatch(let path, _, _),
             .openSSL(let path, _), .interrupted(let path):
            return path
        case .archive(let error): return error.archive + (error.entry.map { "/" + $0 } ?? "")
        }
    }

    /// Worth another try later: the file was busy or changing, or the system was under pressure.
    public var isTransient: Bool {
        switch self {
        case .system(let error): return error.isTransient
        case .changedWhileReading, .checksumMismatch, .interrupted: return true
        case .notRegularFile, .openSSL: return false
        case .archive(let error): return error.category == .io
        }
    }
}
