import CairnArchive
import CairnCore
import CairnHashing
import CairnLibrary
import CairnPipeline
import Glibc

/// An item's source as a file a stage can open: the source file itself, or, for an entry of an archive read in
/// place, its bytes copied out into `scratch` (checked against the item's SHA1) for as long as the stage needs
/// them. For what needs a file and not a stream: a probe that seeks, an upload sent from a file.
package struct ReadableSource: Sendable {
    package let path: String
    /// Whether `path` is a copy of this stage's, to remove.
    private let isCopy: Bool

    package static func open(_ item: ImportItem, scratch: String, work: WorkTracker?) async throws -> ReadableSource {
        let source = item.sourcePath
        guard SourceArchive.split(source) != nil else { return ReadableSource(path: source, isCopy: false) }
        let copy = scratch + "/entry-\(item.checksum.hex)-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).partial"
        do {
            _ = try await BlockingWork.run(tracking: work) { () throws -> HashedFile in
                try FileSystem.makeDirectories(scratch)
                return try FileHasher().copy(from: source, to: copy, expected: item.checksum, syncs: false)
            }
        } catch let error as HashingError {
            throw StageFailure(reason: error.failure, isRetryable: error.isTransient)
        }
        return ReadableSource(path: copy, isCopy: true)
    }

    /// Removes the copy, if this is one.
    package func close() {
        if isCopy { unlink(path) }
    }
}
