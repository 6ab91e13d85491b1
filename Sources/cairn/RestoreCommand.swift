import ArgumentParser
import CairnCore
import CairnImmich
import CairnImmichDestination
import CairnImport
import CairnLibrary
import CairnPipeline
import CairnRun
import CairnS3
import CairnStages
import CairnTrash
import Foundation

/// `cairn restore --run-id ID [--asset SHA1...] [--file-name-matches REGEX]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Put files a run moved to the library's trash back where they were, byte-identical.",
        discussion: """
            Restores every asset the run trashed, or only those named with --asset, and/or those whose \
            file name (in the source or the library) matches --file-name-matches. A different file already \
            at the destination is never overwritten. Each restore is journaled first; restored assets \
            return to the catalog and are excluded from trashing so the next sync keeps them.

            With --destination immich, the run's assets come back from Immich's trash: those the catalog \
            recorded for the run, and any the server shows with the run's tag (cairn/v1/run/ID); a Live \
            Photo's still and movie come back together. --asset and --file-name-matches apply to the library only.

            A library whose catalog is in PostgreSQL (see `cairn import --help`) is restored there, under the \
            library's lock held in the database. A library whose files are in a store (`cairn import --store`) \
            never moved them: its assets come back once each of their objects is seen still there.

            Exit codes: 0 restored; 3 some files could not be restored (each is listed); 1 nothing to \
            restore or the run is unknown; 75 another cairn process holds the library; 77 the Immich \
            server refused the API key.
            """
    )

    @Option(name: .customLong("run-id"), help: "The run whose trash to restore from (see `cairn journal list`).")
    var runID: String

    @Option(name: .customLong("asset"), parsing: .upToNextOption,
            help: "Only these assets (SHA1s, as `cairn journal show` prints them).")
    var assets: [String] = []

    @Option(name: .customLong("file-name-matches"),
            help: "Only assets whose file name matches this regular expression (searched anywhere in the name).")
    var fileNamePattern: String?

    @OptionGroup var library: LibraryOption
    @OptionGroup var destination: DestinationOptions

    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        try destination.rejectAlbums(in: "restore")
        guard !runID.isEmpty else { throw ValidationError("--run-id needs a run id.") }
        _ = try ChecksumArguments.parse(assets, option: "--asset")
        if let fileNamePattern {
            do { _ = try Regex(fileNamePattern) } catch {
                throw ValidationError("--file-name-matches \(fileNamePattern): not a valid regular expression")
            }
        }
    }

    func run() async throws {
        if try destination.isImmich(libraryRoot: library.resolvedPath) {
            guard assets.isEmpty, fileNamePattern == nil else {
                throw ValidationError("--asset and --file-name-matches apply to the library only; an Immich restore brings back the whole run.")
            }
            return try await restoreFromImmich()
        }
        let checksums = try ChecksumArguments.parse(assets, option: "--asset")
        try await StoreOption.withRecorded(libraryRoot: library.resolvedPath) { store in
            try await CatalogAccess.reportingFailures {
                try await CatalogAccess.changingExisting(library, catalog: catalog, command: "restore") { opened, catalog in
                    try await restore(in: opened, catalog: catalog, store: store, checksums: checksums)
                }
            }
        }
    }

    /// The run's trashed files back into the library, which the caller holds.
    private func restore(in opened: Library, catalog: any LibraryCatalog, store: S3Store?, checksums: [Checksum]) async throws {
        let journal = DeletionJournal(libraryRoot: opened.layout.root)
        guard try journal.entries(runID: runID).contains(where: { $0.action == .trash }) else {
            throw CommandError("run \(runID): it trashed nothing (see `cairn journal list`)")
        }
        let summary = try await TrashMaintenance(library: opened, catalog: catalog, store: store).restore(
            runID: runID, checksums: checksums.isEmpty ? nil : Set(checksums), fileNameMatching: fileNamePattern,
            now: Date())
        let files = summary.files
        // A library on a store keeps its trash as a state in the catalog, its objects where they were.
        let trash = store.map { "run \(runID)'s trash (in \($0.description))" } ?? "trash/\(runID)"
        if files.restored.isEmpty && files.alreadyPresent.isEmpty && files.failures.isEmpty {
            guard checksums.isEmpty && fileNamePattern == nil else {
                throw CommandError("nothing in \(trash) matched --asset / --file-name-matches; nothing was restored")
            }
            Output.line("Nothing left to restore from \(trash): everything it trashed is back already.")
            return
        }
        var lines = ["Restored \(files.restored.count) asset(s), \(files.restoredFileCount) file(s) from \(trash)"]
        if !files.alreadyPresent.isEmpty {
            lines.append("  \(files.alreadyPresent.count) file(s) were already back in place")
        }
        for item in files.restored { lines.append("  restored \(item.checksum.hex)  \(item.libraryPaths[0])") }
        for failure in files.failures { lines.append("  not restored: \(failure.path): \(failure.reason)") }
        Output.line(lines.joined(separator: "\n"))
        if summary.exitStatus != .success { throw ExitCode(summary.exitStatus.rawValue) }
    }

    /// The run's assets back from Immich's trash, the catalog and the journal told.
    private func restoreFromImmich() async throws {
        guard let immich = try await destination.connect(libraryRoot: library.resolvedPath, uploads: 1,
                                                         cancellation: PipelineCancellation(),
                                                         needs: ImmichPermissions.restore) else { return }
        try await closing({ await immich.close() }) { try await restore(from: immich) }
    }

    /// The state cairn keeps for the server and user opened under its lock: in PostgreSQL when `--catalog` (or the
    /// state's record of it) says so, else in its SQLite file.
    private func restore(from immich: ImmichDestination) async throws {
        guard LibraryLayout.holdsLibrary(immich.stateRoot) else {
            throw CommandError("\(immich.stateRoot): cairn has no state for this Immich server and user (nothing synced yet?)")
        }
        let location = try catalog.location(libraryRoot: library.resolvedPath, stateRoot: immich.stateRoot)
        if location != nil { catalog.warnOfExposedPassword() }
        try await CatalogAccess.reportingFailures {
            try await RunAssembly.changingExisting(root: immich.stateRoot, contents: .stateOnly, catalog: location,
                                                   command: "restore",
                                                   notice: { Output.error($0) }) {
                try await restore(from: immich, opened: $0, catalog: $1)
            }
        }
    }

    private func restore(from immich: ImmichDestination, opened: Library, catalog: any LibraryCatalog) async throws {
        let summary: ImmichDestination.RestoreSummary
        do {
            summary = try await immich.restore(runID: runID, library: opened, catalog: catalog, now: Date())
        } catch let failure as ImmichFailure {
            throw Output.fail(failure.description, failure.kind == .needsAuth ? .needsAuth : .failure)
        }
        let total = summary.restored.count + summary.restoredByTagOnly
        let missed = summary.purged.count + summary.refused.count
        guard total > 0 || missed > 0 else {
            throw CommandError("run \(runID): nothing of it is in Immich's trash (see `cairn journal list`)")
        }
        var lines = ["Restored \(total) asset(s) of run \(runID) from Immich's trash"]
        for checksum in summary.restored { lines.append("  restored \(checksum.hex)") }
        if summary.restoredByTagOnly > 0 {
            lines.append("  \(summary.restoredByTagOnly) more carried the run's tag (a run this catalog did not record)")
        }
        for checksum in summary.purged {
            lines.append("  not restored \(checksum.hex): Immich purged it from its trash (emptied, or its 30-day purge ran)")
        }
        for checksum in summary.refused {
            lines.append("  not restored \(checksum.hex): Immich refuses it to this key (moved to the Locked Folder?)")
        }
        Output.line(lines.joined(separator: "\n"))
        if missed > 0 { throw ExitCode(ExitStatus.someFilesFailed.rawValue) }
    }
}
