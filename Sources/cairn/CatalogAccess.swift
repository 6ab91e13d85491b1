import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnRun
import CairnStatus
import Foundation

/// The command line's side of opening a library that must already exist: the options resolved, then
/// `RunAssembly` (which decides between the folder's SQLite file and a PostgreSQL catalog), and failures turned
/// into documented exit codes.
enum CatalogAccess {
    /// Runs `body` with the existing library at `option` and its catalog, under the library's lock (also held in
    /// PostgreSQL when the catalog is there; `command` names the run to other hosts).
    static func changingExisting<Value: Sendable>(_ option: LibraryOption, catalog: CatalogLocationOption, command: String,
                                                  _ body: (Library, any LibraryCatalog) async throws -> Value) async throws
        -> Value {
        let root = option.resolvedPath
        let location = try catalog.location(libraryRoot: root)
        if location != nil { catalog.warnOfExposedPassword() }
        return try await RunAssembly.changingExisting(root: root, catalog: location, command: command,
                                                      notice: { Output.error($0) }, body)
    }

    /// Runs `body` with the existing library and its catalog for reading only, without the library's lock.
    static func readingExisting<Value: Sendable>(_ option: LibraryOption, catalog: CatalogLocationOption,
                                                 _ body: (Library, any LibraryCatalog) async throws -> Value)
        async throws -> Value {
        let root = option.resolvedPath
        return try await RunAssembly.readingExisting(root: root, catalog: try catalog.location(libraryRoot: root), body)
    }

    /// Where what reads the library while it may be running (`serve`, `watch --listen`) reads its catalog.
    static func statusSource(libraryRoot: String, catalog: CatalogLocationOption) throws -> any StatusCatalogSource {
        try RunAssembly.statusSource(root: libraryRoot, catalog: try catalog.location(libraryRoot: libraryRoot))
    }

    /// As `statusSource(libraryRoot:catalog:)`, for a folder whose catalog is the one it records (an Immich
    /// destination's state): no flag, variable or cairn.toml names it.
    static func statusSource(recordedIn root: String) throws -> any StatusCatalogSource {
        try RunAssembly.statusSource(root: root, catalog: try CatalogLocationOption.recorded(in: root))
    }

    /// Runs `body`; prints any failure in one line on stderr and exits with its documented code: a held lock
    /// `ExitStatus.libraryLocked`, a run's own failure its status, anything else `ExitStatus.failure`.
    static func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw Output.fail("\(error)", RunExit.documentedStatus(error) ?? .failure)
        }
    }
}
