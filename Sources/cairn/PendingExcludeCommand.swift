import ArgumentParser
import CairnCore
import CairnStatus
import Foundation

/// `cairn pending exclude SHA1... | --all-confirmed-since RUN_ID`: keep content in the library for good.
struct PendingExcludeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exclude",
        abstract: "Keep these in the library whatever happens at the source (never trash them).",
        discussion: """
            After a mass offload (files moved off the source to free space), keep every one of them with \
            `cairn pending exclude --all-confirmed-since RUN_ID`, the run the sync's warning names. \
            Excluding undoes an approval.
            """
    )

    @Argument(help: "SHA1s to keep (as `cairn pending list` prints them).")
    var checksums: [String] = []

    @Option(name: .customLong("all-confirmed-since"),
            help: "Exclude every deletion confirmed by this run or any later one (a run id from the sync's output).")
    var allConfirmedSince: String?

    @OptionGroup var library: LibraryOption
    @OptionGroup var selection: SourceSelection
    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        switch (checksums.isEmpty, allConfirmedSince) {
        case (true, nil): throw ValidationError("Name SHA1s to exclude, or use --all-confirmed-since RUN_ID.")
        case (false, .some): throw ValidationError("Give either SHA1s or --all-confirmed-since, not both.")
        case (_, .some(let runID)) where runID.isEmpty: throw ValidationError("--all-confirmed-since needs a run id.")
        default: _ = try ChecksumArguments.parse(checksums, option: "SHA1")
        }
    }

    func run() async throws {
        let parsed = try ChecksumArguments.parse(checksums, option: "SHA1")
        try await CatalogAccess.reportingFailures {
            try await CatalogAccess.changingExisting(library, catalog: catalog, command: "pending exclude") { _, catalog in
                let review = PendingReview(catalog: catalog)
                let sources = try await selection.sources(in: review)
                if let runID = allConfirmedSince {
                    let excluded = try await review.excludeConfirmed(sinceRunID: runID, at: sources)
                    Output.line("Excluded \(excluded.count) deletion(s) confirmed since run \(runID); they stay in the library.")
                } else {
                    try await review.exclude(parsed, at: sources)
                    Output.line("Excluded \(parsed.count); they stay in the library whatever happens at the source.")
                }
            }
        }
    }
}
