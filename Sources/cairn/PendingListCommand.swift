import ArgumentParser
import CairnCore
import CairnStatus
import Foundation

/// `cairn pending list`: every checksum that waits, per source, as of that source's last sync.
struct PendingListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List what waits: quarantine (with the date it becomes eligible), review, held, deferred, approved.",
        discussion: """
            One line per item: status, SHA1, where it was in the source, and dates. Statuses: \
            quarantine (deleted at the source; trashable from the eligible date), review (gone without \
            proof; approve or exclude it), held (a safety rail held the last sync's deletions), deferred \
            (over --max-delete), eligible / approved (the next sync with --apply-deletions trashes it).
            """
    )

    @OptionGroup var library: LibraryOption
    @OptionGroup var selection: SourceSelection
    @OptionGroup var catalog: CatalogLocationOption

    func run() async throws {
        try await CatalogAccess.reportingFailures {
            let lines = try await CatalogAccess.readingExisting(library, catalog: catalog) { _, catalog in
                try await Self.lines(PendingReview(catalog: catalog), selection: selection)
            }
            Output.line(lines.isEmpty ? "No sources synced into this library yet." : lines.joined(separator: "\n"))
        }
    }

    private static func lines(_ review: PendingReview, selection: SourceSelection) async throws -> [String] {
        var lines: [String] = []
        for source in try await selection.sources(in: review) {
            let (lastSyncRunID, items) = try await review.waiting(at: source)
            let asOf = lastSyncRunID.map { "as of run \($0)" } ?? "never synced"
            lines.append("\(source.rootPath) (\(asOf)): \(items.count) pending")
            for item in items {
                var line = "  \(item.status.padding(toLength: 10, withPad: " ", startingAt: 0)) \(item.checksum.hex)"
                if let path = item.firstSourcePath { line += "  \(path)" }
                if let confirmed = item.confirmedAt { line += "  confirmed \(Timestamp.toTheSecond(confirmed))" }
                if let eligible = item.eligibleAt { line += "  eligible \(Timestamp.toTheSecond(eligible))" }
                lines.append(line)
            }
        }
        return lines
    }
}
