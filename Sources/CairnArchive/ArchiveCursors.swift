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

    /// Streams the entry at header `place` (named `entry`) of the archive at `path` to `body`.
    func read(_ path: String, fingerprint: FileFingerprint, place: Int, entry: String,
              _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        try ArchiveReader.withUTF8Names {
            // The reader stopped closest before the entry, else a new one.
            let kept = idle.withLock { cursors -> Cursor? in
                let candidates = cursors.indices.filter {
                    cursors[$0].path == path && cursors[$0].fingerprint == fingerprint && cursors[$0].reader.headersRead <= place
                }
                guard let best = candidates.max(by: { cursors[$0].reader.headersRead < cursors[$1].reader.headersRead })
                else { return nil }
                return cursors.remove(at: best)
            }
            let cursor = try kept ?? Cursor(path: path, fingerprint: fingerprint, reader: try ArchiveReader(path: path))
            let reader = cursor.reader
            while reader.headersRead < place {
                guard try reader.next() != nil else { break }
                try reader.skipData()
            }
            guard reader.headersRead == place, let raw = try reader.next(), raw.kind == .file,
                  case .success(let name) = EntryName.checked(raw.name), name == entry else {
                throw ArchiveError(archive: path, entry: entry, reason: "no such entry in the archive", category: .notFound)
            }
            let count: Int64
            do { count = try reader.readData(body) } catch var error as ArchiveError {
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
}
