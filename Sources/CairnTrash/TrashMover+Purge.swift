import CairnLibrary
import Foundation

extension TrashMover {
    /// Deletes for good every run folder in `<library>/trash/` whose last trashing is at least
    /// `age` seconds before `now` (the journal's time, not the folder's mtime). The only code in
    /// cairn that deletes files; it never leaves `<library>/trash/` and never follows a symlink.
    /// Run folders the journal does not know are left alone and reported.
    public func purge(olderThan age: TimeInterval, now: Date) throws -> PurgeReport {
        var report = PurgeReport()
        let trashRoot = libraryRoot + "/" + LibraryPaths.trashFolder
        switch try FileSystem.kind(trashRoot) {
        case .missing: return report
        case .directory: break
        case .regular, .other: throw DeletionError(trashRoot, "is not a real directory; refusing to purge through it")
        }

        var lastTrashed: [String: Date] = [:]
        for entry in try journal.entries() where entry.action == .trash {
            lastTrashed[entry.runID] = max(lastTrashed[entry.runID] ?? entry.timestamp, entry.timestamp)
        }

        let trash = try TrashTree.Directory(path: trashRoot)
        for name in try trash.names() {
            guard try trash.isDirectory(name) else {
                report.skipped.append(DeletionFailure(checksum: nil, path: trashRoot + "/" + name,
                                                      reason: "not a run folder; left alone"))
                continue
            }
            guard LibraryPaths.problem(withRunID: name) == nil, let trashedAt = lastTrashed[name] else {
                report.skipped.append(DeletionFailure(checksum: nil, path: trashRoot + "/" + name,
                                                      reason: "no trash entry in the journal for this run; left alone"))
                continue
            }
            guard now.timeIntervalSince(trashedAt) >= age else {
                report.keptRuns.append(name)
                continue
            }
            let runFolder = try TrashTree.Directory(at: name, in: trash.descriptor, path: trashRoot + "/" + name)
            let files = try TrashTree.files(in: runFolder)
            try journal.append(JournalEntry(runID: name, action: .purge, checksum: nil, paths: files, timestamp: now))
            report.purgedFileCount += try TrashTree.remove(name, in: trash)
            report.purgedRuns.append(name)
        }
        if !report.purgedRuns.isEmpty { try FileSystem.syncDirectory(trashRoot) }
        return report
    }
}
