import ArgumentParser
import CairnStatus
import Foundation

/// `--source DIR`: which of the library's sources a pending verb applies to (default: every source).
struct SourceSelection: ParsableArguments {
    @Option(name: .customLong("source"), help: "Only this source folder of the library (default: every source).")
    var source: String?

    func validate() throws {
        if let source, source.isEmpty { throw ValidationError("--source needs a folder path.") }
    }

    /// The chosen sources; an error naming the folder when the library never synced it.
    func sources(in review: PendingReview) async throws -> [PendingReview.Source] {
        try await review.sources(at: source)
    }
}
