import CairnCore

/// One file to hash: where it is, and the stat facts the scanner saw (so a file that moved since is caught).
public struct HashRequest: Sendable {
    public var path: String
    public var expected: FileFingerprint?

    public init(path: String, expected: FileFingerprint? = nil) {
        self.path = path
        self.expected = expected
    }
}

/// Hashes many files on a bounded number of threads, one `FileHasher` each.
public enum ParallelHasher {
    /// The default thread count: every core, since page-cached hashing is CPU bound.
    public static var defaultWorkers: Int { System.coreCount }

    /// Hashes `requests`; results come back in the same order as the requests. `mappingThreshold: nil`
    /// reads every file with `read` (for comparison in benchmarks).
    ///
    /// `dropsCache`: each file's pages leave the page cache once it is hashed (see `FileHasher.hash`). `interrupt`:
    /// once set, the files being read and those not started yet end as `interrupted`, within one read each.
    ///
    /// `progress` is called from the hashing threads after each file with its request index and byte count
    /// (0 when it failed); keep it cheap.
    public static func hash(
        _ requests: [HashRequest],
        workers: Int = defaultWorkers,
        bufferSize: Int = FileHasher.defaultBufferSize,
        mappingThreshold: Int64? = FileHasher.defaultMappingThreshold,
        dropsCache: Bool = false,
        interrupt: Interrupt? = nil,
        progress: (@Sendable (_ index: Int, _ bytes: Int64) -> Void)? = nil
    ) -> [Result<HashedFile, HashingError>] {
        parallelMap(
            count: requests.count, workers: workers,
            makeState: { () -> Result<FileHasher, OpenSSLError> in
                Result { () throws(OpenSSLError) in
                    let hasher = try FileHasher(bufferSize: bufferSize, mappingThreshold: mappingThreshold)
                    hasher.interrupt = interrupt
                    return hasher
                }
            },
            body: { hasher, index in
                let request = requests[index]
                let result: Result<HashedFile, HashingError>
                switch hasher {
                case .failure(let error): result = .failure(.openSSL(path: request.path, error))
                case .success(let hasher):
                    result = Result { () throws(HashingError) in
                        try hasher.hash(path: request.path, expected: request.expected, dropsCache: dropsCache)
                    }
                }
                progress?(index, (try? result.get())?.fingerprint.size ?? 0)
                return result
            })
    }
}
