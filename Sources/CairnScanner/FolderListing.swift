import CairnArchive
import CairnCore
import Glibc

/// One folder's entries, listed (read, stat'ed, classified) on a worker thread ahead of the walk.
struct Listing: Sendable {
    /// Media files, sorted by path.
    var files: [SourceFile] = []
    /// Sub-folders to enter, sorted as their name plus "/" (see `Walk.visit`).
    var subfolders: [String] = []
    /// The open folder, for opening its sub-folders; closed once no job needs it.
    var handle: FolderHandle?
    var sidecars: [SourceFile] = []
    var otherFiles = 0
    var junk = 0
    var symlinks: [String] = []
    var issues: [ScanIssue] = []
    /// The archives among the entries of `subfolders`, each with the archive files it stands for: an archive is
    /// a folder of its own name, a split archive's parts one folder (`ArchiveParts`).
    var archives: [String: [String]] = [:]
    var refusedEntries: [ScanIssue] = []
    var settlingArchives: [ScanIssue] = []
    /// Archives whose entries were read from them, and those whose saved listing stood (unchanged).
    var archivesListed = 0
    var archivesUnchanged = 0
}

/// How a walk that reads archives lists them: where the source is, and when "now" is.
struct ArchiveWalk: Sendable {
    var root: String
    var startedNanoseconds: Int64
    var saved: SavedListings?

    init(root: String, saved: SavedListings?) {
        self.root = root
        self.saved = saved
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startedNanoseconds = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// An open folder's descriptor, closed when the last listing or job holding it is gone.
final class FolderHandle: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}

extension Listing {
    /// Lists archive `name` (the archive `files`, or the parts of a split one) as the folder `prefix + name + "/"`:
    /// its media entries, its sidecars, refused entries, and, when one is damaged, an issue naming it (the walk is then not trusted for deletions, so the
    /// entries past the damage are never taken for gone). Each entry's stat facts are the archive's, with its size.
    static func archive(_ name: String, files: [String], prefix: String, walk: ArchiveWalk) -> Listing {
        var listing = Listing()
        let relative = prefix + name
        var seen = Set<String>()
        for file in files {
            add(archive: prefix + file, as: relative, walk: walk, seen: &seen, into: &listing)
        }
        // A zip's entries are read where they start, in any order: they go in path order. Those of an archive read
        // only from its start (a tar) keep its order, in which the run reads them: one pass over it.
        if listing.files.count > 1, files.allSatisfy({ $0.lowercased().hasSuffix(".zip") }) {
            listing.files = PathOrder.sortedIndices(of: listing.files.map(\.relativePath)).map { listing.files[$0] }
        }
        listing.sidecars.sort { PathOrder.precedes($0.relativePath, $1.relativePath) }
        return listing
    }

    /// Adds the entries of the archive at `archiveRelative` to `listing` under the folder `relative` (an entry
    /// named already, by an earlier part, is refused).
    private static func add(archive archiveRelative: String, as relative: String, walk: ArchiveWalk,
                            seen: inout Set<String>, into listing: inout Listing) {
        let path = walk.root + "/" + archiveRelative
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            listing.issues.append(ScanIssue(relativePath: archiveRelative, reason: "the archive is gone or no longer a file",
                                            category: .notFound))
            return
        }
        let archive = FileFingerprint(info)
        let found: ArchiveListing
        if let saved = walk.saved?.listing(of: archiveRelative, archive: archive) {
            found = saved
            listing.archivesUnchanged += 1
        } else {
            found = SourceArchive.list(path)
            walk.saved?.save(found, of: archiveRelative, archive: archive)
            listing.archivesListed += 1
        }
        for entry in found.entries {
            guard seen.insert(entry.name).inserted else {
                listing.refusedEntries.append(ScanIssue(relativePath: archiveRelative + "/" + entry.name,
                                                        reason: "an earlier part of the archive holds this name; that one is read"))
                continue
            }
            let entryPath = relative + "/" + entry.name
            let parts = entry.name.split(separator: "/")
            let base = parts.last.map(String.init) ?? entry.name
            if JunkRules.isJunkFile(base) || parts.dropLast().contains(where: { JunkRules.isJunkDirectory(String($0)) })
                || parts.first == "__MACOSX" {
                listing.junk += 1
                continue
            }
            var fingerprint = archive
            fingerprint.size = entry.size
            let kind = MediaClassifier.kind(forExtension: MediaClassifier.fileExtension(of: base))
            if kind != .other {
                listing.files.append(SourceFile(relativePath: entryPath, fingerprint: fingerprint, kind: kind))
            } else if SidecarMatcher.isSidecar(name: base), entry.size <= SidecarMatcher.maxBytes {
                listing.sidecars.append(SourceFile(relativePath: entryPath, fingerprint: fingerprint, kind: .other))
            } else {
                listing.otherFiles += 1
            }
        }
        listing.refusedEntries += found.refused.map { ScanIssue(relativePath: archiveRelative + "/" + $0.name, reason: $0.reason) }
        if let failure = found.failure {
            let after = found.entries.last.map { " after entry \($0.name)" } ?? ""
            listing.issues.append(ScanIssue(relativePath: archiveRelative, reason: "the archive cannot be read\(after): "
                                            + "\(failure.reason); its remaining entries are not imported",
                                            category: failure.category))
        }
    }

}
