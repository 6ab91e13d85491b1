import CairnCore
import CairnHashing
import Glibc
import Synchronization

/// Puts originals into the library's content-addressed store, durably and at most once.
///
/// Each copy is written to `tmp/`, hashed while it is written, fsynced, checked against the checksum the
/// file had when it was hashed, and only then renamed to its final name: a final path never holds a partial file.
public struct OriginalsStore: Sendable {
    public let layout: LibraryLayout
    private static let sequence = Atomic<UInt64>(0)

    public init(layout: LibraryLayout) { self.layout = layout }

    public enum Placement: Sendable, Equatable {
        /// The bytes were copied.
        case copied(bytes: Int64)
        /// A verified copy was already at the final path (an earlier run stopped before cataloguing it).
        case alreadyPresent
    }

    /// Copies `sourcePath` to the original's final path for `checksum`, unless a verified copy is there.
    public func place(sourcePath: String, checksum: Checksum, relativePath: String, hasher: FileHasher) throws(HashingError) -> Placement {
        let finalPath = layout.absolute(relativePath)
        if FileSystem.exists(finalPath) {
            if let existing = try? hasher.hash(path: finalPath), existing.checksum == checksum { return .alreadyPresent }
            // A wrong file at a content address can only be damage: set it aside, never trust or delete it.
            let quarantined = layout.temporaryDirectory + "/damaged-\(checksum.hex)-\(Self.nextToken())"
            _ = rename(finalPath, quarantined)
        }
        let temporary = layout.temporaryDirectory + "/\(checksum.hex).\(Self.nextToken()).partial"
        let copied = try hasher.copy(from: sourcePath, to: temporary, expected: checksum)
        do {
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: finalPath))
            try FileSystem.renameDurably(temporary, to: finalPath)
        } catch {
            unlink(temporary)
            throw .system(error)
        }
        return .copied(bytes: copied.fingerprint.size)
    }

    private static func nextToken() -> String {
        "\(getpid())-\(sequence.add(1, ordering: .relaxed).newValue)"
    }
}
