import CairnCore
import CairnHashing
import Glibc

/// Puts originals into the library's content-addressed store, durably and at most once.
///
/// Each copy is written to `tmp/`, hashed while it is written, made durable, checked against the checksum the
/// file had when it was hashed, and only then renamed to its final name, and the rename made durable: a final
/// path never holds a partial file. In an import, a `GroupCommit` makes the copies durable in batches instead.
public struct OriginalsStore: Sendable {
    public let layout: LibraryLayout
    /// False when a group commit makes the copies durable before anything points at them.
    package let syncsEachFile: Bool

    public init(layout: LibraryLayout) {
        self.init(layout: layout, syncsEachFile: true)
    }

    package init(layout: LibraryLayout, syncsEachFile: Bool) {
        self.layout = layout
        self.syncsEachFile = syncsEachFile
    }

    public enum Placement: Sendable, Equatable {
        /// The bytes were copied.
        case copied(bytes: Int64)
        /// A verified copy was already at the final path (an earlier run stopped before cataloguing it).
        case alreadyPresent
        /// The file at the final path had other content (damage): it was moved to `quarantine`, never deleted,
        /// and the bytes were copied anew.
        case replacedDamaged(bytes: Int64, quarantinedAt: String)
    }

    /// Copies `sourcePath` to the original's final path for `checksum`, unless a verified copy is there.
    public func place(sourcePath: String, checksum: Checksum, relativePath: String, hasher: FileHasher) throws(HashingError) -> Placement {
        let finalPath = layout.absolute(relativePath)
        var quarantined: String?
        if FileSystem.exists(finalPath) {
            // A hashing error (EIO, EMFILE, ENOMEM) says nothing about the bytes: it is thrown, and retried later.
            // For a resumed item whose source is gone, the file in place may be the only copy there is.
            let existing = try hasher.hash(path: finalPath)
            if existing.checksum == checksum { return .alreadyPresent }
            // Only a verified mismatch is damage: set the file aside where nothing ever empties, never delete it.
            let target = layout.quarantineDirectory + "/damaged-\(checksum.hex)-\(TemporaryName.token())"
            do {
                try FileSystem.makeDirectories(layout.quarantineDirectory)
                try FileSystem.renameDurably(finalPath, to: target)
            } catch {
                throw .system(error)
            }
            quarantined = target
        }
        let folder = TemporaryName.shard(layout.temporaryDirectory(forFinal: relativePath))
        let temporary = folder + "/\(checksum.hex).\(TemporaryName.token()).partial"
        let copied = try hasher.copy(from: sourcePath, to: temporary, expected: checksum, syncs: syncsEachFile)
        do {
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: finalPath))
            try FileSystem.rename(temporary, to: finalPath, syncingFolder: syncsEachFile)
        } catch {
            unlink(temporary)
            throw .system(error)
        }
        if let quarantined { return .replacedDamaged(bytes: copied.fingerprint.size, quarantinedAt: quarantined) }
        return .copied(bytes: copied.fingerprint.size)
    }
}
