import CairnCore
import CairnLibrary
import Foundation

/// Moves library files into `<library>/trash/<run-id>/` and back, journaling every action first.
///
/// Trashing is a `rename` within the library's filesystem: nothing is ever unlinked here. The only
/// code that deletes for good is `purge(olderThan:now:)`, and only below `<library>/trash/`.
/// Callers hold the `LibraryLock`.
public struct TrashMover: Sendable {
    public let libraryRoot: String
    public let journal: DeletionJournal

    public init(libraryRoot: String) {
        self.libraryRoot = libraryRoot
        self.journal = DeletionJournal(libraryRoot: libraryRoot)
    }

    static func trashPath(runID: String, _ relative: String) -> String {
        LibraryPaths.trashFolder + "/" + runID + "/" + relative
    }

    /// Trashes each item's files. An item with an unsafe path or a clash in the trash is left whole;
    /// a missing file is reported and its siblings still move. Throws only when the journal cannot be written.
    public func trash(_ items: [TrashItem], runID: String, now: Date) throws -> TrashReport {
        try LibraryPaths.validateRunID(runID)
        var report = TrashReport()
        for item in items {
            var toMove: [String] = []
            var blockers: [DeletionFailure] = []
            for path in item.libraryPaths {
                func fail(_ reason: String) -> DeletionFailure {
                    DeletionFailure(checksum: item.checksum, path: path, reason: FailureReason(reason))
                }
                if let problem = LibraryPaths.problem(with: path) {
                    blockers.append(fail(problem))
                    continue
                }
                let destination = Self.trashPath(runID: runID, path)
                guard try FileSystem.noSymlinkOnTheWay(path, under: libraryRoot),
                      try FileSystem.noSymlinkOnTheWay(destination, under: libraryRoot) else {
                    blockers.append(fail("a folder on the way is a symlink or not a folder"))
                    continue
                }
                switch (try FileSystem.kind(libraryRoot + "/" + path), try FileSystem.kind(libraryRoot + "/" + destination)) {
                case (.regular, .missing):
                    toMove.append(path)
                case (.regular, _):
                    blockers.append(fail("\(destination) already exists; refusing to overwrite it"))
                case (.missing, .regular):
                    continue  // An earlier, interrupted attempt of this run already moved it.
                case (.missing, _):
                    report.failures.append(fail("not in the library"))
                case (.directory, _), (.other, _):
                    blockers.append(fail("not a regular file; only files are trashed"))
                }
            }
            guard blockers.isEmpty else {
                report.failures += blockers
                continue
            }
            guard !toMove.isEmpty else { continue }

            let moved = try journalAndMove(.trash, runID: runID, checksum: item.checksum, paths: toMove,
                                           sourcePath: item.sourcePath, now: now, failures: &report.failures)
            if !moved.isEmpty {
                report.trashed.append(TrashItem(checksum: item.checksum, libraryPaths: moved, sourcePath: item.sourcePath))
            }
        }
        return report
    }

    /// The trash entries of `entries` that a restore of `checksums` (all when nil) and of the names matching
    /// `pattern` (a regex searched anywhere in a library or source file name) brings back.
    static func chosen(_ entries: [JournalEntry], checksums: Set<Checksum>?, fileNameMatching pattern: String?) throws
        -> [JournalEntry] {
        let regex: Regex<AnyRegexOutput>?
        do {
            regex = try pattern.map { try Regex($0) }
        } catch {
            throw DeletionError("--file-name-matches \(pattern ?? "")", "is not a valid regular expression: \(error)")
        }
        return entries.filter { entry in
            guard entry.action == .trash else { return false }
            if let checksums, !(entry.checksum.map(checksums.contains) ?? false) { return false }
            guard let regex else { return true }
            let names = (entry.paths + [entry.sourcePath].compactMap { $0 }).map(FileSystem.baseName(of:))
            return names.contains { $0.contains(regex) }
        }
    }

    /// Puts a run's trashed files back where they were, byte-identical, optionally only the given
    /// assets and/or those whose source or library file name matches `fileNameMatching` (a regex searched
    /// anywhere in the name). A different file already at the destination is never overwritten.
    public func restore(
        runID: String, checksums: Set<Checksum>? = nil, fileNameMatching pattern: String? = nil, now: Date
    ) throws -> RestoreReport {
        try LibraryPaths.validateRunID(runID)
        var report = RestoreReport()
        for entry in try Self.chosen(try journal.entries(runID: runID), checksums: checksums, fileNameMatching: pattern) {
            var toMove: [String] = []
            for path in entry.paths {
                func fail(_ reason: String) {
                    report.failures.append(DeletionFailure(checksum: entry.checksum, path: path, reason: FailureReason(reason)))
                }
                guard LibraryPaths.problem(with: path) == nil else {
                    fail("the journal names an unsafe path; left alone")
                    continue
                }
                let trashed = Self.trashPath(runID: runID, path)
                let inTrash = libraryRoot + "/" + trashed, inLibrary = libraryRoot + "/" + path
                guard try FileSystem.noSymlinkOnTheWay(trashed, under: libraryRoot),
                      try FileSystem.noSymlinkOnTheWay(path, under: libraryRoot) else {
                    fail("a folder on the way is a symlink or not a folder")
                    continue
                }
                switch (try FileSystem.kind(inTrash), try FileSystem.kind(inLibrary)) {
                case (.regular, .missing):
                    toMove.append(path)
                case (.regular, .regular):
                    if try FileSystem.sameBytes(inTrash, inLibrary) {
                        report.alreadyPresent.append(path)
                    } else {
                        fail("a different file is already there; refusing to overwrite it (the trashed copy stays in \(trashed))")
                    }
                case (.regular, _):
                    fail("something that is not a file is in the way; refusing to overwrite it")
                case (.missing, .regular):
                    continue  // Restored before.
                case (.missing, _):
                    fail("not in \(LibraryPaths.trashFolder)/\(runID)/ (purged?)")
                case (.directory, _), (.other, _):
                    fail("\(trashed) is not a regular file")
                }
            }
            guard !toMove.isEmpty else { continue }

            let moved = try journalAndMove(.restore, runID: runID, checksum: entry.checksum, paths: toMove,
                                           sourcePath: entry.sourcePath, now: now, failures: &report.failures)
            if let checksum = entry.checksum, !moved.isEmpty {
                report.restored.append(TrashItem(checksum: checksum, libraryPaths: moved, sourcePath: entry.sourcePath))
            }
        }
        return report
    }

    /// Journals the move of `paths` first, then moves each (into the run's trash, or back out of it), a failure
    /// leaving its siblings to move; returns the paths moved.
    private func journalAndMove(_ action: JournalEntry.Action, runID: String, checksum: Checksum?, paths: [String],
                                sourcePath: String?, now: Date, failures: inout [DeletionFailure]) throws -> [String] {
        try journal.append(JournalEntry(runID: runID, action: action, checksum: checksum, paths: paths,
                                        sourcePath: sourcePath, timestamp: now))
        var moved: [String] = []
        for path in paths {
            let trashed = Self.trashPath(runID: runID, path)
            do {
                try FileSystem.moveDurably(from: action == .restore ? trashed : path, to: action == .restore ? path : trashed,
                                           under: libraryRoot)
                moved.append(path)
            } catch {
                failures.append(DeletionFailure(checksum: checksum, path: path, reason: FailureReason(error)))
            }
        }
        return moved
    }
}
