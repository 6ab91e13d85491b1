import ArgumentParser
import CairnCore
import CairnStatus
import Foundation

/// `cairn pending approve SHA1...`: trash at the next sync, without waiting for quarantine or review.
struct PendingApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Let the next sync with deletions applied trash these now, skipping quarantine and review.",
        discussion: "The safety rails still apply. Approving undoes an exclusion. Only content a source has seen is accepted."
    )

    @Argument(help: "SHA1s to approve for trashing (as `cairn pending list` prints them).")
    var checksums: [String] = []

    @OptionGroup var library: LibraryOption
    @OptionGroup var selection: SourceSelection
    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        guard !checksums.isEmpty else { throw ValidationError("Name at least one SHA1 to approve.") }
        _ = try ChecksumArguments.parse(checksums, option: "SHA1")
    }

    func run() async throws {
        let parsed = try ChecksumArguments.parse(checksums, option: "SHA1")
        try await CatalogAccess.reportingFailures {
            try await CatalogAccess.changingExisting(library, catalog: catalog, command: "pending approve") { _, catalog in
                let review = PendingReview(catalog: catalog)
                try await review.approve(parsed, at: try await selection.sources(in: review))
                Output.line("Approved \(parsed.count) for trashing at the next sync with --apply-deletions.")
            }
        }
    }
}
