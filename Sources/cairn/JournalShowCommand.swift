import ArgumentParser
import CairnLibrary
import CairnTrash
import Foundation

/// `cairn journal show --run-id ID | --last`: every entry of one run, with the paths it moved.
struct JournalShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Every journal entry of one run: action, SHA1, source path, and the library files it moved."
    )

    @Option(name: .customLong("run-id"), help: "The run to show (see `cairn journal list`).")
    var runID: String?

    @Flag(name: .customLong("last"), help: "Show the run of the newest journal entry.")
    var last = false

    @OptionGroup var library: LibraryOption

    func validate() throws {
        switch (runID, last) {
        case (nil, false): throw ValidationError("Say which run: --run-id ID or --last.")
        case (.some, true): throw ValidationError("Give --run-id or --last, not both.")
        case (.some(let id), false) where id.isEmpty: throw ValidationError("--run-id needs a run id.")
        default: break
        }
    }

    func run() async throws {
        try await CatalogAccess.reportingFailures {
            let root = try library.existingRoot()
            let journal = DeletionJournal(libraryRoot: FileSystem.resolved(root) ?? root)
            JournalText.warnDamaged(try journal.read(), path: journal.path)
            guard let chosen = try runID ?? journal.lastRunID() else {
                Output.line("The journal is empty: nothing was ever trashed in this library.")
                return
            }
            let entries = try journal.entries(runID: chosen)
            guard !entries.isEmpty else { throw CommandError("run \(chosen): no entries in \(journal.path)") }
            Output.line("Run \(chosen): \(entries.count) entr\(entries.count == 1 ? "y" : "ies")")
            Output.line(entries.map(JournalText.entryLine).joined(separator: "\n"))
        }
    }
}
