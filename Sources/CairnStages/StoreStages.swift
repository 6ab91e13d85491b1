import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnPipeline
import CairnStore
import Glibc

/// The stages of a library whose files live in an object store (`--store`): each phase works in the library's
/// folder as `LibraryStages` does, then puts what it made to the store before the phase returns (so its rows commit
/// only once the store holds the files), and the folder keeps no copy past the item's last phase this run. A phase
/// that reads the original and finds no copy in the folder (a resumed item) reads it from the store first.
package struct StoreStages: PipelineStages {
    package let base: LibraryStages
    package let store: any ObjectStore
    /// The lanes each item takes this run: its original leaves the folder after the last.
    package let route: @Sendable (ImportItem) -> ItemRoute
    /// A worker's folder copies, counted by the jobs that read them (nil: let go by `route`, or kept).
    private let copies: HeldCopies?
    /// Whether a copy leaves the folder after the item's last lane (an import's stages, not a worker's jobs).
    private let followsRoute: Bool

    package init(base: LibraryStages, store: any ObjectStore, route: @escaping @Sendable (ImportItem) -> ItemRoute) {
        self.base = base
        self.store = store
        self.route = route
        copies = nil
        followsRoute = true
    }

    /// The stages of a worker's jobs (`cairn worker --store`). In a folder of the worker's own (`ownsFolder`:
    /// scratch space), an original read from the store stays only while a job of this process reads it (a
    /// thumbnail and a clip of one file may run at once). In a library folder that other processes use too (the
    /// import's, for the jobs it runs itself or a worker beside it), copies are never removed here: another
    /// process may be about to read one, and the import lets its own go after their last job and sweeps the rest.
    package init(jobsIn base: LibraryStages, store: any ObjectStore, ownsFolder: Bool) {
        self.base = base
        self.store = store
        // Never the last lane: the held copies, not the route, say when a copy goes.
        route = { _ in ItemRoute(includesSynthesis: true) }
        copies = ownsFolder ? HeldCopies() : nil
        followsRoute = false
    }

    private var layout: LibraryLayout { base.layout }

    /// A file of at most this size goes to the store from memory: read once, hashed, and sent from the same bytes,
    /// never written to the folder. A bigger one is copied into the folder (hashed while copied), then put in parts.
    package static let inMemoryLimit: Int64 = 16 << 20

    package func transfer(_ item: ImportItem) async throws -> PhaseResult {
        let original = LibraryStages.originalRelativePath(of: item, in: layout)
        guard item.byteCount <= Self.inMemoryLimit, route(item).lanes == [.transfer] else {
            // The later lanes read the original from the folder: it is copied there as for any library.
            let result = try await base.transfer(item)
            try await publish(original)
            evictIfLast(.transfer, item, original)
            return result
        }
        let source = item.sourcePath, checksum = item.checksum
        // A store that checks the SHA1 it is sent gets the bytes unhashed here: it refuses them if they are no
        // longer what the walk hashed. Any other gets them checked here first.
        let checking: (any SHA1CheckingStore)?
        do { checking = try await store.checkingSHA1() } catch { throw StoreFiles.stageFailure(error) }
        let bytes: [UInt8], hashesHere = checking == nil
        do {
            bytes = try await BlockingWork.run(tracking: base.work) { () throws -> [UInt8] in
                try FileHasher().readWhole(path: source, expected: hashesHere ? checksum : nil)
            }
        } catch let error as HashingError {
            throw StageFailure(reason: error.failure, isRetryable: error.isTransient)
        } catch {
            throw StageFailure.unusable(FailureReason(error))
        }
        do {
            let key = try ObjectKey(original)
            let outcome = if let checking {
                try await checking.put(key, bytes: bytes, sha1: checksum)
            } else {
                try await store.put(key, bytes: bytes)
            }
            if outcome == .created { base.onCopied(Int64(bytes.count)) }
        } catch where error.kind == .contentMismatch {
            throw StageFailure(reason: FailureReason("content changed since it was hashed (the store refused bytes "
                                                     + "that do not hash to \(checksum))"), isRetryable: true)
        } catch {
            throw StoreFiles.stageFailure(error)
        }
        return PhaseResult(.copied, products: StageRows(assets: [LibraryStages.asset(item, originalPath: original,
                                                                                     runID: base.runID)]))
    }

    package func readMetadata(_ item: ImportItem) async throws -> PhaseResult {
        try await withOriginal(of: item, in: .metadata) { try await base.readMetadata(item) }
    }

    package func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult {
        try await withOriginal(of: item, in: .thumbnail) { try await publishingDerived(of: item, try await base.makeThumbnail(item)) }
    }

    package func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult {
        try await withOriginal(of: item, in: .synthesis) { try await publishingDerived(of: item, try await base.synthesizeClip(item)) }
    }

    // MARK: Helpers

    /// Runs `phase` with the item's original in the folder (read from the store when it is not), and lets the
    /// folder's copy go when `lane` is the item's last this run.
    private func withOriginal(of item: ImportItem, in lane: Lane,
                              _ phase: () async throws -> PhaseResult) async throws -> PhaseResult {
        let result = try await holdingOriginal(of: item, phase)
        if followsRoute { evictIfLast(lane, item, LibraryStages.originalRelativePath(of: item, in: layout)) }
        return result
    }

    /// Runs `body` with the item's original in the folder, read from the store when it is not; in a worker's
    /// stages the copy goes once no job of this process holds it any more.
    package func holdingOriginal<Value>(of item: ImportItem, _ body: () async throws -> Value) async throws -> Value {
        let original = LibraryStages.originalRelativePath(of: item, in: layout)
        let path = layout.absolute(original)
        copies?.hold(path)
        defer { copies?.release(path) }
        try await StoreFiles.fetch(original, from: store, into: layout)
        return try await body()
    }

    /// Puts the derived files a phase made, then removes them from the folder. A preview that is its original
    /// names the original, which is already there.
    private func publishingDerived(of item: ImportItem, _ result: PhaseResult) async throws -> PhaseResult {
        guard let rows = result.products as? StageRows else { return result }
        let original = LibraryStages.originalRelativePath(of: item, in: layout)
        for file in rows.derivedFiles where file.path != original {
            try await publish(file.path)
            unlink(layout.absolute(file.path))
        }
        return result
    }

    private func publish(_ relative: String) async throws { try await StoreFiles.put(relative, from: layout, into: store) }

    private func evictIfLast(_ lane: Lane, _ item: ImportItem, _ original: String) {
        if route(item).lanes.last == lane { unlink(layout.absolute(original)) }
    }
}

/// The folder copies a worker's jobs read, each counted by the jobs holding it: the last to let go removes it,
/// under the same lock a new holder takes, so no job finds its copy gone between its fetch and its read.
final class HeldCopies: Sendable {
    private let counts = Locked<[String: Int]>([:])

    func hold(_ path: String) { counts.withLock { $0[path, default: 0] += 1 } }

    func release(_ path: String) {
        counts.withLock { counts in
            let left = (counts[path] ?? 1) - 1
            if left > 0 {
                counts[path] = left
            } else {
                counts[path] = nil
                unlink(path)
            }
        }
    }
}

/// The library folder's side of a store: a file read from the store into the folder, and a store's failure as a
/// phase's.
package enum StoreFiles {
    /// Reads `relative` from the store into the folder at the same path unless the folder has it (written under
    /// `tmp/`, then renamed into place: a kill leaves no partial file where a phase would read it).
    package static func fetch(_ relative: String, from store: any ObjectStore, into layout: LibraryLayout) async throws {
        let final = layout.absolute(relative)
        guard !FileSystem.exists(final) else { return }
        do {
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: final))
            try await store.download(try ObjectKey(relative), to: final, via: TemporaryName.make(in: layout, for: relative))
        } catch let error as StoreError {
            throw stageFailure(error)
        } catch let error as SystemCallError {
            throw StageFailure(reason: FailureReason(error.description, category: FailureCategory(error.code)),
                               isRetryable: error.isTransient)
        }
    }

    /// Puts the folder's file at `relative` in the store under the same key.
    package static func put(_ relative: String, from layout: LibraryLayout, into store: any ObjectStore) async throws {
        do { _ = try await store.put(try ObjectKey(relative), fromFile: layout.absolute(relative)) } catch {
            throw stageFailure(error)
        }
    }

    /// Removes from `folder` every file of the store's folders (originals, derived files, sidecars) that `store`
    /// holds with the same size; what it lacks stays. Returns how many went.
    @discardableResult
    package static func sweep(_ folder: FolderStore, into store: any ObjectStore) async throws -> Int {
        var removed = 0
        for prefix in ["originals/", "derived/", "sidecars/"] {
            var after: ObjectKey?
            while true {
                let page = try await folder.list(prefix: prefix, after: after, limit: 1000)
                guard let last = page.last else { break }
                after = last.key
                for object in page where try await store.size(of: object.key) == object.size {
                    try await folder.delete(object.key)
                    removed += 1
                }
            }
        }
        return removed
    }

    /// A store's failure as a phase's: retried when the store or the network may recover.
    package static func stageFailure(_ error: any Error) -> StageFailure {
        guard let error = error as? StoreError else { return .transient(FailureReason(error)) }
        let retryable = [.network, .server].contains(error.category)
        return StageFailure(reason: FailureReason(operation: "store", error.description, category: error.category),
                            isRetryable: retryable)
    }
}
