import ArgumentParser
import CairnCore
import CairnLibrary
import CairnTrash
import Foundation

/// `cairn journal list`: one line per run that trashed, restored or purged.
struct JournalListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "One line per run in the journal: when, and how many assets and files it trashed, restored or purged."
    )

    @OptionGroup var library: LibraryOption

    func run() async throws {
        try await CatalogAccess.reportingFailures {
            let root = try library.existingRoot()
            let journal = DeletionJournal(libraryRoot: FileSystem.resolved(root) ?? root)
            let contents = try journal.read()
            JournalText.warnDamaged(contents, path: journal.path)
            let runs = try journal.runs()
            guard !runs.isEmpty else {
                Output.line("The journal is empty: nothing was ever trashed in this library.")
                return
            }
            Output.line(runs.map(JournalText.summaryLine).joined(separator: "\n"))
        }
    }
}

enum JournalText {
    static func summaryLine(_ run: JournalRunSummary) -> String {
        var parts = ["\(run.runID)  \(Timestamp.toTheSecond(run.firstTimestamp))"]
        if run.trashedAssets > 0 { parts.append("trashed \(run.trashedAssets) asset(s), \(run.trashedFiles) file(s)") }
        if run.restoredAssets > 0 { parts.append("restored \(run.restoredAssets) asset(s), \(run.restoredFiles) file(s)") }
        if run.purgedFiles > 0 { parts.append("purged \(run.purgedFiles) file(s)") }
        return parts.joined(separator: "  ")
    }

    static func entryLine(_ entry: JournalEntry) -> String {
        var line = "\(Timestamp.toTheSecond(entry.timestamp))  \(entry.action.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0))"
        line += "  " + (entry.checksum?.hex ?? "-")
        if let source = entry.sourcePath { line += "  source \(source)" }
        line += "\n" + entry.paths.map { "    \($0)" }.joined(separator: "\n")
        return line
    }

    static func warnDamaged(_ contents: JournalContents, path: String) {
        guard !contents.damagedLines.isEmpty else { return }
        let lines = contents.damagedLines.map(String.init).joined(separator: ", ")
        Output.error("\(path): line(s) \(lines) could not be read (torn by a crash?); they are skipped")
    }
}
