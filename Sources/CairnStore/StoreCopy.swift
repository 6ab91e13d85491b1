import CairnCore

/// A library folder's files copied to another store (`cairn store copy`): every key under the given prefixes that
/// the destination lacks, or holds with another size, is put; the rest cost nothing but the listing. Memory stays
/// flat: the source is listed a page at a time, the destination one folder at a time (a content-addressed folder
/// holds some thousands of keys), and a file that fails is reported and skipped, never the end of the copy. A
/// second copy after an interrupted one sends only what is missing.
public struct StoreCopy: Sendable {
    public struct Report: Sendable, Equatable {
        /// Objects written by this copy, and their bytes.
        public var copied = 0
        public var copiedBytes: Int64 = 0
        /// Objects the destination already held, with the same size.
        public var present = 0
        /// Keys that could not be copied, each with why.
        public var failures: [String] = []

        public init() {}
    }

    public let source: FolderStore
    public let destination: any ObjectStore
    /// Puts at once.
    public var width = 8
    /// Told after each page of keys, with the report so far.
    public var onPage: @Sendable (Report) -> Void = { _ in }

    public init(source: FolderStore, destination: any ObjectStore) {
        self.source = source
        self.destination = destination
    }

    /// Copies the keys under each of `prefixes` (folders, each ending with `/`).
    public func run(prefixes: [String]) async throws(StoreError) -> Report {
        var report = Report()
        for prefix in prefixes {
            var after: ObjectKey?
            var folder: (name: String, held: [String: Int64])?
            while true {
                let page = try await source.list(prefix: prefix, after: after, limit: 1000)
                guard let last = page.last else { break }
                after = last.key
                var wanted: [StoredObject] = []
                for object in page {
                    let name = RelativePath.folder(of: object.key.text)
                    if folder?.name != name { folder = (name, try await listing(of: name)) }
                    if folder?.held[object.key.text] == object.size {
                        report.present += 1
                    } else {
                        wanted.append(object)
                    }
                }
                await put(wanted, into: &report)
                onPage(report)
            }
        }
        return report
    }

    /// The largest file sent from memory with its SHA1.
    static let inMemoryLimit: Int64 = 16 << 20

    /// The SHA1 a content-addressed key names (`originals/ab/<sha1>.jpg`, `sidecars/ab/<sha1>.xmp`), else nil.
    static func contentAddress(of key: ObjectKey) -> Checksum? {
        guard key.text.hasPrefix("originals/") || key.text.hasPrefix("sidecars/") else { return nil }
        let name = key.text[(key.text.lastIndex(of: "/").map { key.text.index(after: $0) } ?? key.text.startIndex)...]
        return Checksum(hex: name.prefix { $0 != "." })
    }

    /// The destination's keys (and sizes) under `folder/`.
    private func listing(of folder: String) async throws(StoreError) -> [String: Int64] {
        var held: [String: Int64] = [:]
        var after: ObjectKey?
        while true {
            let page = try await destination.list(prefix: folder + "/", after: after, limit: 1000)
            guard let last = page.last else { return held }
            for object in page { held[object.key.text] = object.size }
            after = last.key
        }
    }

    private func put(_ objects: [StoredObject], into report: inout Report) async {
        let source = source
        let destination = destination
        let sha1Checking = (try? await destination.checkingSHA1()) ?? nil
        for result in await concurrentMap(objects, width: width, {
            await Self.put($0, from: source, to: destination, checking: sha1Checking)
        }) { report.add(result) }
    }

    /// What one put did: written, found there, or why it failed.
    struct PutResult: Sendable {
        var size: Int64
        var created = false
        var failure: String?
    }

    /// Puts one file. An original's or sidecar's name is the SHA1 of its bytes: to a store that checks it, a file
    /// small enough goes with it, so one that is no longer what its name says (damaged on the disk) is refused.
    private static func put(_ object: StoredObject, from source: FolderStore, to destination: any ObjectStore,
                            checking: (any SHA1CheckingStore)?) async -> PutResult {
        do {
            let outcome: PutOutcome
            if let checking, object.size <= inMemoryLimit, let sha1 = contentAddress(of: object.key) {
                outcome = try await checking.put(object.key, bytes: try await source.read(object.key, range: nil), sha1: sha1)
            } else {
                outcome = try await destination.put(object.key, fromFile: source.root + "/" + object.key.text)
            }
            return PutResult(size: object.size, created: outcome == .created)
        } catch {
            return PutResult(size: object.size, failure: "\(object.key.text): \(error.reason)")
        }
    }
}

extension StoreCopy.Report {
    mutating func add(_ result: StoreCopy.PutResult) {
        if let failure = result.failure {
            failures.append(failure)
        } else if result.created {
            copied += 1
            copiedBytes += result.size
        } else {
            present += 1
        }
    }
}
