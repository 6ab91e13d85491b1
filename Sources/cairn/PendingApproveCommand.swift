import ArgumentParser
import CairnCore
import Foundation

/// `cairn pending approve SHA1...`: trash at the next sync, without waiting for quarantine or review.
struct PendingApproveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "Let the next sync with deletions applied trash these now, skipping quarantine and review.",
        discussion: "The safety rails still apply. Approving undoes an exclusion. Only content a source has seen is accepted."
    )

    @Argument(help: "SHA1s to approve for trashing (as `cairn pending list` prints them).")
    var checksums: [String] = []

    @OptionGroup var library: LibraryOption
    @OptionGroup var selection: SourceSelection

    func validate() throws {
        guard !checksums.isEmpty else { throw ValidationError("Name at least one SHA1 to approve.") }
        _ = try ChecksumArguments.parse(checksums, option: "SHA1")
    }

    func run() throws {
        let parsed = try ChecksumArguments.parse(checksums, option: "SHA1")
        try LibraryAccess.changingPendingReview(library) { review in
            try review.approve(parsed, at: try selection.sources(in: review))
            Output.line("Approved \(parsed.count) for trashing at the next sync with --apply-deletions.")
        }
    }
}
