import CairnCore
import Foundation

/// Where a library's files live: its folder (`FolderStore`) or an S3-compatible bucket (`CairnS3`). The interface is
/// what content addressing needs and no more: a key is written once with bytes that never change, so a second
/// writer of the same key is harmless and the store never has to compare versions.
public protocol ObjectStore: Sendable {
    /// What the store is, for messages: a folder's path or `s3://bucket/prefix` (never a secret).
    var description: String { get }

    /// Writes the file at `path` as `key` unless `key` already exists; the object is complete or absent, never
    /// partial, whoever else writes it at the same time.
    func put(_ key: ObjectKey, fromFile path: String) async throws(StoreError) -> PutOutcome

    /// As `put(_:fromFile:)`, for bytes already in memory (a small file read once, checked, then sent).
    func put(_ key: ObjectKey, bytes: [UInt8]) async throws(StoreError) -> PutOutcome

    /// The object's bytes in `range` (its whole content when nil); a range past the end is cut at the end.
    func read(_ key: ObjectKey, range: Range<Int64>?) async throws(StoreError) -> [UInt8]

    /// The object's size, or nil when there is none.
    func size(of key: ObjectKey) async throws(StoreError) -> Int64?

    /// Up to `limit` objects under `prefix` whose keys come after `after`, in the bytewise order of their keys.
    func list(prefix: String, after: ObjectKey?, limit: Int) async throws(StoreError) -> [StoredObject]

    /// Removes the object; removing one that is not there is no error.
    func delete(_ key: ObjectKey) async throws(StoreError)
}

/// An optional capability: a store that checks a put's bytes against their SHA1 itself (S3's
/// `x-amz-checksum-sha1`), so a writer that knows the SHA1 (the content address) sends them without hashing them
/// again, and bytes that changed since they were hashed are refused by the store, never stored.
public protocol SHA1CheckingStore: ObjectStore {
    /// Whether this store refuses a put whose bytes do not hash to the SHA1 sent with them (learnt once: a store
    /// may ignore the header, and then `put(_:bytes:sha1:)` must not be trusted).
    func checksSHA1() async throws(StoreError) -> Bool

    /// Writes `bytes` as `key` only if their SHA1 is `sha1`: other bytes are refused (`.contentMismatch`) and
    /// nothing is written. Call it only when `checksSHA1()` says the store checks.
    func put(_ key: ObjectKey, bytes: [UInt8], sha1: Checksum) async throws(StoreError) -> PutOutcome
}

/// An optional capability: a store that keeps what an interrupted write left behind until told to clear it (S3
/// keeps, and bills, the parts of an upload never completed or aborted).
public protocol AbandonedWritesStore: ObjectStore {
    /// Clears the writes begun before `date` and never finished; how many it cleared.
    func clearWrites(begunBefore date: Date) async throws(StoreError) -> Int
}

extension ObjectStore {
    /// This store as one that checks the SHA1 a put names, when it is one and says it does (asked once per store);
    /// nil: the writer hashes the bytes itself.
    public func checkingSHA1() async throws(StoreError) -> (any SHA1CheckingStore)? {
        guard let checking = self as? any SHA1CheckingStore, try await checking.checksSHA1() else { return nil }
        return checking
    }

    /// How long an unfinished write is left for a later run to resume (an upload a kill interrupted is resumed by
    /// the next run, part by part) before it counts as abandoned: a week, long enough for a weekly cron job.
    public static var abandonedAfter: TimeInterval { 7 * 86_400 }

    /// Clears what this store holds of writes begun more than `abandonedAfter` before `now` and never finished, when
    /// it keeps such; how many it cleared (0 for a store that keeps none).
    public func clearAbandonedWrites(now: Date) async throws(StoreError) -> Int {
        guard let keeping = self as? any AbandonedWritesStore else { return 0 }
        return try await keeping.clearWrites(begunBefore: now.addingTimeInterval(-Self.abandonedAfter))
    }
}

/// What a `put` did.
public enum PutOutcome: Sendable, Equatable {
    case created
    /// The key was there already (content addressing: the same bytes), so nothing was written.
    case alreadyThere
}

/// One object of a listing.
public struct StoredObject: Sendable, Equatable {
    public var key: ObjectKey
    public var size: Int64

    public init(key: ObjectKey, size: Int64) {
        self.key = key
        self.size = size
    }
}

/// A key inside a store: relative, `/`-separated, no empty, `.` or `..` segment, so that no key can leave the
/// folder of a `FolderStore` or mean two objects on S3.
public struct ObjectKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let text: String

    public init(_ text: String) throws(StoreError) {
        let segments = text.split(separator: "/", omittingEmptySubsequences: false)
        guard !text.isEmpty, text.utf8.count <= 1024, !text.contains("\0"),
              segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
            throw StoreError(.refused, key: text, "is not a key a store takes (empty, `.` or `..` segment, or too long)")
        }
        self.text = text
    }

    public var description: String { text }

    /// Bytewise, as S3 lists keys and as the catalog's `BINARY`/`COLLATE "C"` orders paths.
    public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool { PathOrder.precedes(lhs.text, rhs.text) }
}

/// A store's failure: what was asked, of which key, and the category the failure counts under.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The store refused the request as malformed, or the key.
        case refused
        /// The credentials were refused, or lack a permission.
        case credentials
        /// The bucket or folder is not there.
        case missingStore
        /// The object is not there.
        case missingObject
        /// The bytes sent are not the content their key names (they changed since they were hashed).
        case contentMismatch
        /// The store's clock and ours differ too much for a signature to be valid.
        case clockSkew
        /// The store answered with a server error, or asked to slow down, and retries did not help.
        case server
        /// No answer: the connection failed, dropped or timed out.
        case network
        /// A local system call failed.
        case system(FailureCategory)
    }

    public let kind: Kind
    public let key: String?
    public let reason: String

    public init(_ kind: Kind, key: String? = nil, _ reason: String) {
        self.kind = kind
        self.key = key
        self.reason = reason
    }

    public var description: String { key.map { "\($0): \(reason)" } ?? reason }

    /// The category a file whose work met this failure counts under.
    public var category: FailureCategory {
        switch kind {
        case .refused: return .server
        case .credentials, .clockSkew: return .auth
        case .missingStore, .missingObject: return .notFound
        case .contentMismatch: return .other
        case .server: return .server
        case .network: return .network
        case .system(let category): return category
        }
    }
}
