import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnTrash
import Foundation

/// `cairn trash purge --older-than DAYS`: the only command that deletes files for good.
struct TrashPurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge",
        abstract: "Delete for good the trash of runs that trashed at least DAYS days ago.",
        discussion: """
            Age counts from the run's last trashing in the journal. Only folders under <library>/trash/ \
            that the journal knows are deleted; symbolic links are never followed. Each purge is journaled \
            first. Purged files cannot be restored. With --destination immich it purges nothing: cairn never \
            empties Immich's trash; Immich does (its trash settings, or Empty trash in its web page). A library \
            whose catalog is in PostgreSQL (see `cairn import --help`) is purged there, under the library's lock.

            A library whose files are in a store (`cairn import --store`) keeps its trash as a state in the \
            catalog, the objects where they were: a purge deletes from the store the objects of the runs' assets \
            still trashed (never those restored, or imported again since), after journaling their paths.
            """
    )

    @Option(name: .customLong("older-than"), help: "Purge runs that trashed at least this many days ago (0 purges all).")
    var olderThanDays: Int

    @OptionGroup var library: LibraryOption
    @OptionGroup var destination: DestinationOptions

    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        try destination.rejectAlbums(in: "trash purge")
        guard olderThanDays >= 0 else { throw ValidationError("--older-than must be 0 or more days.") }
    }

    func run() async throws {
        if try destination.isImmich(libraryRoot: library.resolvedPath) {
            Output.line("cairn never purges Immich's trash: Immich empties it (its trash settings, or Empty trash "
                        + "in its web page). Until then `cairn restore --run-id ID --destination immich` brings a run back.")
            return
        }
        try await StoreOption.withRecorded(libraryRoot: library.resolvedPath) { store in
            try await CatalogAccess.reportingFailures {
                let report = try await CatalogAccess.changingExisting(library, catalog: catalog, command: "trash purge") {
                    try await TrashMaintenance(library: $0, catalog: $1, store: store)
                        .purge(olderThanDays: olderThanDays, now: Date())
                }
                var lines = ["Purged \(report.purgedRuns.count) run(s), \(report.purgedFileCount) file(s); "
                             + "kept \(report.keptRuns.count) run(s) younger than \(olderThanDays) day(s)"]
                for run in report.purgedRuns { lines.append(store == nil ? "  purged trash/\(run)" : "  purged run \(run)'s trash") }
                Output.line(lines.joined(separator: "\n"))
                for skipped in report.skipped { Output.error("left alone: \(skipped)") }
            }
        }
    }
}
