/// The counters a person cares about, for one run.
public struct RunCounts: Codable, Sendable, Equatable {
    /// Files found in the source (media and not).
    public var filesSeen = 0
    public var bytesSeen: Int64 = 0
    /// New or changed files that need hashing (unchanged ones reuse the cached SHA1).
    public var toHash = 0
    public var bytesToHash: Int64 = 0
    public var hashed = 0
    public var bytesHashed: Int64 = 0
    /// Content the library does not hold yet.
    public var new = 0
    /// Content the library already holds (or seen twice in this source).
    public var duplicates = 0
    /// Items fully imported.
    public var ready = 0
    /// Files that failed, each with a reason in an `error` event.
    public var failed = 0
    /// Files that are not media or are junk; counted, never imported.
    public var skipped = 0
    /// Checksums stamped "confirmed deleted" in this run.
    public var confirmedDeleted = 0
    /// Media kept byte-identical but with no preview (no decoder here, a RAW with no usable image); also `ready`.
    public var keptWithoutPreview = 0
    /// Retries scheduled after a retryable failure (a timeout, an I/O error, a dropped connection).
    public var retries = 0

    public init() {}

    enum CodingKeys: String, CodingKey {
        case filesSeen, bytesSeen, toHash, bytesToHash, hashed, bytesHashed, new, duplicates, ready, failed, skipped,
             confirmedDeleted, keptWithoutPreview, retries
    }

    /// Logs and summaries written before a counter existed read it as 0.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func int(_ key: CodingKeys) throws -> Int { try c.decodeIfPresent(Int.self, forKey: key) ?? 0 }
        func bytes(_ key: CodingKeys) throws -> Int64 { try c.decodeIfPresent(Int64.self, forKey: key) ?? 0 }
        filesSeen = try int(.filesSeen)
        bytesSeen = try bytes(.bytesSeen)
        toHash = try int(.toHash)
        bytesToHash = try bytes(.bytesToHash)
        hashed = try int(.hashed)
        bytesHashed = try bytes(.bytesHashed)
        new = try int(.new)
        duplicates = try int(.duplicates)
        ready = try int(.ready)
        failed = try int(.failed)
        skipped = try int(.skipped)
        confirmedDeleted = try int(.confirmedDeleted)
        keptWithoutPreview = try int(.keptWithoutPreview)
        retries = try int(.retries)
    }
}
