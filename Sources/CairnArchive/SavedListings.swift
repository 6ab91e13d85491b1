import CairnCore
import Foundation

/// The listings of a source's archives kept between runs (a file each in `folder`), so that a walk of an archive
/// that has not changed (the same stat facts) reads nothing of it: a `.tgz` is listed only by reading it whole.
/// A cache: a listing lost or unreadable is listed again; a damaged archive's is never kept.
public struct SavedListings: Sendable {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    private struct Saved: Codable {
        var path: String
        var archive: FileFingerprint
        var entries: [ArchiveListing.Entry]
        var refused: [ArchiveListing.Refusal]
    }

    /// The saved listing of the archive at `relativePath`, if it was saved for these stat facts. One used is
    /// marked so (its modification time), so that `removeUnused` keeps it.
    public func listing(of relativePath: String, archive: FileFingerprint) -> ArchiveListing? {
        let path = file(for: relativePath)
        guard let data = FileManager.default.contents(atPath: path),
              let saved = try? JSONDecoder().decode(Saved.self, from: data),
              saved.path == relativePath, saved.archive == archive else { return nil }
        utimes(path, nil)
        return ArchiveListing(entries: saved.entries, refused: saved.refused)
    }

    /// Removes the listings no walk used since `date` (of archives gone, or of a source no longer imported);
    /// returns how many. Any source's walk keeps its own in use, so a library of several sources loses none it needs.
    @discardableResult
    public func removeUnused(since date: Date) -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return 0 }
        var removed = 0
        for name in names where name.hasSuffix(".json") {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, Double(info.st_mtim.tv_sec) < date.timeIntervalSince1970 else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// Keeps `listing` for the archive at `relativePath` with these stat facts (not a damaged one's). A failure to
    /// write is no failure of the walk: the next one lists the archive again.
    public func save(_ listing: ArchiveListing, of relativePath: String, archive: FileFingerprint) {
        guard listing.failure == nil,
              let data = try? JSONEncoder().encode(Saved(path: relativePath, archive: archive, entries: listing.entries,
                                                         refused: listing.refused)) else { return }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let target = file(for: relativePath)
        let temporary = target + ".\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data) else { return }
        if rename(temporary, target) != 0 { unlink(temporary) }
    }

    /// One file per archive path, named by a 64-bit FNV-1a of it (the path inside tells a collision apart).
    private func file(for relativePath: String) -> String { folder + "/" + FNV1a64.hex(of: relativePath) + ".json" }
}
