import CairnCore

/// Readers of archives that can only be read from their start (a `.tgz`, a `.tar`), kept open where they stopped:
/// the next entry asked for further on is reached by reading on from there, not from the start again. Entries asked
/// for in the archive's order (the walk lists them in that order) then cost one pass over the archive in all.
/// At most `capacity` readers are kept; a reader is used by one thread at a time (taken out while it reads).
final class ArchiveCursors: Sendable {
    static let shared = ArchiveCursors()
    static let capacity = 8

    private final class Cursor: @unchecked Sendable {
        let path: String
        let fingerprint: FileFingerprint
        let reader: ArchiveReader

        init(path: String, fingerprint: FileFingerprint, reader: ArchiveReader) {
            self.path = path
            self.fingerprint = fingerprint
            self.reader = reader
        }
    }

    private let idle = Locked<[Cursor]>([])

    /// Streams entry `entry` of the archive at `path` (with these stat facts) to `body`: found reading on from the
    /// reader that stopped last in it, and from the archive's start only if it is not further on.
    func read(_ path: String, fingerprint: FileFingerprint, entry: String,
              _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        try ArchiveReader.withUTF8Names {
            let kept = idle.withLock { cursors -> Cursor? in
                guard let last = cursors.lastIndex(where: { $0.path == path && $0.fingerprint == fingerprint }) else {
                    return nil
                }
                return cursors.remove(at: last)
            }
            var cursor = try kept ?? Cursor(path: path, fingerprint: fingerprint, reader: try ArchiveReader(path: path))
            var found: Bool
            do {
                found = try Self.seek(cursor.reader, to: entry)
            } catch where kept != nil {
                // A kept reader past the entry reads on into the damage of a cut archive: the entry may still be
                // whole before it, from the start.
                found = false
            }
            if !found, kept != nil {
                cursor = Cursor(path: path, fingerprint: fingerprint, reader: try ArchiveReader(path: path))
                found = try Self.seek(cursor.reader, to: entry)
            }
            guard found else {
                throw ArchiveError(archive: path, entry: entry, reason: "no such entry in the archive", category: .notFound)
            }
            let count: Int64
            do { count = try cursor.reader.readData(body) } catch var error as ArchiveError {
                error.entry = entry
                throw error
            }
            // Kept only after a whole read: a reader that failed midway is in no known place.
            idle.withLock { cursors in
                cursors.append(cursor)
                if cursors.count > Self.capacity { cursors.removeFirst() }
            }
            return count
        }
    }

    /// Reads headers until `entry`'s (true) or the archive's end (false).
    private static func seek(_ reader: ArchiveReader, to entry: String) throws -> Bool {
        while let raw = try reader.next() {
            if raw.kind == .file, case .success(let name) = EntryName.checked(raw.name), name == entry { return true }
            try reader.skipData()
        }
        return false
    }
}
