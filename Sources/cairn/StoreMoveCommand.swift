import ArgumentParser
import CairnCheck
import CairnCore
import CairnImport
import CairnLibrary
import CairnS3
import CairnStages
import CairnStore
import Foundation

/// `cairn store move --to s3://BUCKET/PREFIX`: a folder library's files moved onto a store, which the library uses
/// from then on.
struct StoreMoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Move a library's originals, sidecars and derived files onto an S3-compatible store for good.",
        discussion: """
            Copies every file under originals/, sidecars/ and derived/ to the same path under PREFIX (what the \
            store holds with the same size already is left alone; each upload carries a checksum the store \
            checks, an original's or sidecar's the SHA1 its name is), then checks the catalog against the store: \
            only when every file the catalog names is there with its size does the library switch (recorded in \
            <library>/.cairn-store, with the library's identity in the store), and only then are the folder's \
            copies of what the store holds removed. Interrupted at any point, running it again finishes the move. \
            The library's lock is held throughout: no import or sync runs meanwhile. Tapes, the catalog and the \
            run logs stay in the folder. A library whose trash holds assets is refused (restore or purge them \
            first), as is a store that holds another library.

            The store is found as `cairn store copy --help` says. Exit status: 0 moved; 3 some files could not be \
            copied or the check found the store short (the library is left as it was; run it again); 1 the store \
            could not be used or the library cannot move; 75 the library is busy.
            """
    )

    @OptionGroup var target: StoreTargetOptions
    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    func run() async throws {
        let root = try library.existingRoot()
        let location = try S3Location(parsing: target.destination)
        if let recorded = LibraryLayout(root: root).recordedStore, (try? S3Location(parsing: recorded)) != location {
            throw Output.fail("\(root)'s files are in \(recorded) already (\(LibraryLayout(root: root).storeMarkerPath))")
        }
        let store = try await StoreOption.connect(location)
        var status = ExitStatus.success
        try await closing({ await store.close() }) {
            try await CatalogAccess.reportingFailures {
                status = try await CatalogAccess.changingExisting(library, catalog: catalog, command: "store move") { opened, catalog in
                    try await move(opened.layout, catalog: catalog, into: store)
                }
            }
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    /// Copies, checks, switches and sweeps, each step only once the one before it has fully succeeded.
    private func move(_ layout: LibraryLayout, catalog: any LibraryCatalog, into store: S3Store) async throws -> ExitStatus {
        let trashed = try await catalog.trashedAssets(runID: nil)
        guard trashed.isEmpty else {
            Output.error("\(layout.root)'s trash holds \(trashed.count) asset(s), which stay in its folder: `cairn restore` "
                         + "or `cairn trash purge` them first, then move")
            return .failure
        }
        // The library's identity in the store first: a store that holds another library's files is refused before
        // any is sent.
        do {
            try await StoreOption.claim(store, for: layout, sharedCatalog: false)
        } catch {
            Output.error("\(store.description) cannot take this library: \(error)")
            return .failure
        }
        var copy = StoreCopy(source: FolderStore(root: layout.root), destination: store)
        copy.width = target.width
        let report = try await copy.run(prefixes: ["originals/", "sidecars/", "derived/"])
        let megabytes = String(format: "%.1f", Double(report.copiedBytes) / 1_048_576)
        Output.line("Copied \(report.copied) file(s) (\(megabytes) MiB) to \(store.description); \(report.present) were there already.")
        for failure in report.failures { Output.error("not copied: \(failure)") }
        guard report.failures.isEmpty else {
            Output.error("the library stays in its folder; run `cairn store move` again to send the rest")
            return .someFilesFailed
        }
        var check = StoreCheck(catalog: catalog, store: store)
        check.trashed = []
        let found = Locked<[String]>([])
        check.onFinding = { finding in
            if case .orphan = finding { return }
            found.withLock { $0.append(CheckCommand.describe(finding)) }
        }
        let checked = try await check.run()
        let short = found.withLock { $0 }
        guard short.isEmpty else {
            for line in short { Output.error(line) }
            Output.error("the store lacks \(short.count) file(s) the catalog names; the library stays in its folder")
            return .someFilesFailed
        }
        try StoreOption.record(store.settings.location, libraryRoot: layout.root)
        let removed = try await StoreFiles.sweep(FolderStore(root: layout.root), into: store)
        Output.line("Moved: \(checked.catalogFiles) file(s) the catalog names are in \(store.description), which "
                    + "holds the library's files from now on; \(removed) folder copies removed.")
        return .success
    }
}
