import ArgumentParser
import CairnCore
import CairnLibrary
import CairnNarration
import CairnStatus
import Foundation

/// `cairn status`: when the library last synced, how the last run went, and what waits for review.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the library's last run: outcome, when, its phase timeline, counts and failed files."
    )

    @OptionGroup var library: LibraryOption

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    @OptionGroup var catalog: CatalogLocationOption

    func run() async throws {
        let path = library.resolvedPath
        let immich = Self.immichStates(in: path)
        guard LibraryLayout.holdsLibrary(path) || !immich.isEmpty else {
            throw Output.fail("\(path): no library here yet (run `cairn import FOLDER` first)")
        }
        let now = Date()
        if LibraryLayout.holdsLibrary(path) {
            try await CatalogAccess.reportingFailures {
                let report = try await CatalogAccess.readingExisting(library, catalog: catalog) { opened, catalog in
                    try await LibraryStatus.report(layout: opened.layout, catalog: catalog)
                }
                if json {
                    Output.line(report.json(now: now))
                } else {
                    FileHandle.standardOutput.write(Data(report.text(now: now).utf8))
                }
            }
        }
        // Each Immich server and account synced from this library keeps its own runs: shown after the library's
        // (as plain text; --json stays the library's one object).
        guard !json else { return }
        for (server, user, root) in immich {
            Output.line("\nImmich destination \(server), user \(user):")
            try await CatalogAccess.reportingFailures {
                let report = try await Self.report(stateRoot: root)
                FileHandle.standardOutput.write(Data(report.text(now: now).utf8))
            }
        }
    }

    /// The status of the state kept for one Immich server and user, read where it keeps its catalog (the catalog it
    /// records in PostgreSQL, else its SQLite file), changing nothing.
    private static func report(stateRoot root: String) async throws -> StatusReport {
        let source = try CatalogAccess.statusSource(recordedIn: root)
        return try await source.reading { try await LibraryStatus.report(layout: source.layout, catalog: $0) }
    }

    /// `<library>/immich/<server>/<user id>` folders that hold cairn's state for an Immich destination.
    static func immichStates(in libraryRoot: String) -> [(server: String, user: String, root: String)] {
        let base = libraryRoot + "/immich"
        let files = FileManager.default
        var found: [(String, String, String)] = []
        for server in ((try? files.contentsOfDirectory(atPath: base)) ?? []).sorted() {
            for user in ((try? files.contentsOfDirectory(atPath: base + "/" + server)) ?? []).sorted() {
                let root = base + "/" + server + "/" + user
                if LibraryLayout.holdsLibrary(root) { found.append((server, user, root)) }
            }
        }
        return found
    }
}
