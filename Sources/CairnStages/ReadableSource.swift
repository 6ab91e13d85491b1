import CairnArchive
import CairnCore
import CairnHashing
import CairnLibrary
import CairnPipeline
import Foundation
import Glibc

/// An item's source as a file a stage can open: the source file itself, or, for an entry of an archive read in
/// place, its bytes copied out into `scratch` (checked against the item's SHA1) for as long as the stage needs
/// them. For what needs a file and not a stream: a probe that seeks, an upload sent from a file.
package struct ReadableSource: Sendable {
    package let path: String
    /// Whether `path` is a copy of this stage's, to remove.
    private let isCopy: Bool

    /// Bytes of copies in scratch held now: the copy is made once the copies already there leave it room
    /// (`ScratchBudget`), and counted until `close`.
    private let held: Int64

    package static func open(_ item: ImportItem, scratch: String, work: WorkTracker?) async throws -> ReadableSource {
        let source = item.sourcePath
        guard SourceArchive.split(source) != nil else { return ReadableSource(path: source, isCopy: false, held: 0) }
        let copy = copyPath(of: item, in: scratch)
        let bytes = max(0, item.byteCount)
        do {
            try await ScratchBudget.shared.holding(bytes, work: work) {
                try FileSystem.makeDirectories(scratch)
                _ = try FileHasher().copy(from: source, to: copy, expected: item.checksum, syncs: false)
            }
        } catch {
            unlink(copy)
            throw error
        }
        return ReadableSource(path: copy, isCopy: true, held: bytes)
    }

    /// A file of `entry`'s bytes in `scratch`, for what needs a file of an entry already read into memory: counted
    /// with those bytes (not again), removed by `close`.
    package static func write(_ entry: HeldEntryBytes, of item: ImportItem, scratch: String, work: WorkTracker?) async throws
        -> ReadableSource {
        let copy = copyPath(of: item, in: scratch), bytes = entry.bytes
        do {
            try await BlockingWork.run(tracking: work) {
                try FileSystem.makeDirectories(scratch)
                guard FileManager.default.createFile(atPath: copy, contents: Data(bytes)) else {
                    throw StageFailure.transient(FailureReason("cannot write \(copy)", category: .io))
                }
            }
        } catch {
            unlink(copy)
            throw error
        }
        return ReadableSource(path: copy, isCopy: true, held: 0)
    }

    /// A name in `scratch` no other copy has, this process's or another's.
    private static func copyPath(of item: ImportItem, in scratch: String) -> String {
        scratch + "/entry-\(item.checksum.hex)-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).partial"
    }

    /// Removes the copy, if this is one, and gives its bytes back.
    package func close() {
        guard isCopy else { return }
        unlink(path)
        ScratchBudget.shared.release(held)
    }
}

/// An archive's entry read out of it once into memory, checked against the item's SHA1: for what can take bytes
/// (an upload, a still's probe). Its bytes count against `ScratchBudget` as a copy would, until `release`.
package struct HeldEntryBytes: Sendable {
    package let bytes: [UInt8]
    /// What was taken of the budget for them.
    private let held: Int64

    package static func read(_ item: ImportItem, work: WorkTracker?) async throws -> HeldEntryBytes {
        let count = max(0, item.byteCount)
        let bytes = try await ScratchBudget.shared.holding(count, work: work) {
            try FileHasher().readWhole(path: item.sourcePath, expected: item.checksum)
        }
        return HeldEntryBytes(bytes: bytes, held: count)
    }

    /// Gives the bytes' share of the budget back.
    package func release() { ScratchBudget.shared.release(held) }
}

/// What copies of archive entries (in scratch, or in memory: `HeldEntryBytes`) may hold at once: a copy is made when
/// those already there and it fit in `allowance`, or alone. So the scratch space (or memory) an import needs is never
/// more than its largest entry plus the allowance, however many lanes upload at once: many small photos side by side,
/// a large video by itself.
package final class ScratchBudget: Sendable {
    package static let shared = ScratchBudget(allowance: 64 << 20)

    private let queue: AdmissionQueue<Int64, Int64, Void>

    package init(allowance: Int64) {
        queue = AdmissionQueue(0, order: .strict) { inUse, bytes in
            guard Self.admits(bytes, besides: inUse, allowance: allowance) else { return nil }
            inUse += bytes
            return ()
        }
    }

    /// The rule: room within the allowance, or nothing else in scratch.
    package static func admits(_ bytes: Int64, besides inUse: Int64, allowance: Int64) -> Bool {
        inUse == 0 || inUse + bytes <= allowance
    }

    /// The bytes of the copies in scratch now.
    package var inUse: Int64 { queue.state }

    /// Waits for room for `bytes` (throws `CancellationError` if the task is cancelled meanwhile).
    package func acquire(_ bytes: Int64) async throws { try await queue.acquire(bytes) }

    package func release(_ bytes: Int64) { queue.update { $0 -= bytes } }

    /// Takes `bytes` of the allowance and runs `body` (reading an entry out) on the blocking pool; on a failure gives
    /// them back and throws it as the stage's (a read that failed, by what the hashing said).
    func holding<Value: Sendable>(_ bytes: Int64, work: WorkTracker?,
                                  _ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await acquire(bytes)
        do {
            return try await BlockingWork.run(tracking: work, body)
        } catch let error as HashingError {
            release(bytes)
            throw StageFailure(reason: error.failure, isRetryable: error.isTransient)
        } catch {
            release(bytes)
            throw error
        }
    }
}
