import ArgumentParser
import CairnCore
import CairnLibrary
import CairnNarration
#if SharedQueue
import CairnPostgresCatalog
import CairnQueue
import CairnSharedWork
#endif
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

    #if SharedQueue
    @OptionGroup var catalog: CatalogLocationOption
    #endif

    func run() async throws {
        let path = library.resolvedPath
        let immich = Self.immichStates(in: path)
        guard LibraryLayout.holdsLibrary(path) || !immich.isEmpty else {
            Output.error("\(path): no library here yet (run `cairn import FOLDER` first)")
            throw ExitCode(1)
        }
        let now = Date()
        if LibraryLayout.holdsLibrary(path) {
            let report = try await Self.report(libraryRoot: path, catalog: catalogLocation(libraryRoot: path))
            if json {
                Output.line(report.json(now: now))
            } else {
                FileHandle.standardOutput.write(Data(report.text(now: now).utf8))
            }
        }
        // Each Immich server and account synced from this library keeps its own runs: shown after the library's
        // (as plain text; --json stays the library's one object).
        guard !json else { return }
        for (server, user, root) in immich {
            let opened = try Library(root: root, readOnly: true)
            defer { opened.close() }
            Output.line("\nImmich destination \(server), user \(user):")
            FileHandle.standardOutput.write(Data(try LibraryStatus.report(library: opened).text(now: now).utf8))
        }
    }

    #if SharedQueue
    private func catalogLocation(libraryRoot: String) throws -> PostgresLocation? {
        try catalog.location(libraryRoot: libraryRoot)
    }

    /// The library's report from its catalog: its SQLite file, or the PostgreSQL database `catalog` names, read only.
    static func report(libraryRoot: String, catalog location: PostgresLocation?) async throws -> StatusReport {
        guard let location else { return try report(libraryRoot: libraryRoot) }
        let layout = LibraryLayout(root: FileSystem.resolved(libraryRoot) ?? libraryRoot)
        try Library.checkCatalog(of: layout, isAt: location.description)
        guard let identity = LibraryIdentity.read(layout) else {
            throw CommandError("\(layout.root): no cairn library here yet (run `cairn import FOLDER --catalog URL` first)")
        }
        do {
            return try await PostgresCatalog.reading(at: location, library: identity) { catalog in
                try await LibraryStatus.report(layout: layout, catalog: catalog)
            }
        } catch let error as PostgresCatalogError {
            Output.error(error.description)
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
    #else
    private func catalogLocation(libraryRoot: String) throws -> Never? { nil }

    static func report(libraryRoot: String, catalog: Never?) async throws -> StatusReport {
        try report(libraryRoot: libraryRoot)
    }
    #endif

    static func report(libraryRoot: String) throws -> StatusReport {
        let opened = try Library(root: libraryRoot, readOnly: true)
        defer { opened.close() }
        return try LibraryStatus.report(library: opened)
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
