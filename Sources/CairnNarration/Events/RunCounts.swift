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

    public init() {}
}
