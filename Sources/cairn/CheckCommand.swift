import ArgumentParser
import CairnCheck
import CairnCore
import CairnImport
import CairnLibrary
import CairnS3
import CairnStore
import Foundation

/// `cairn check [--store s3://…] [--repair]`: the catalog against the files of the library's folder or a store.
struct CheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Compare the catalog with the library's files (or a store's copy of them) and say what differs.",
        discussion: """
            Lists the files under originals/, derived/ and sidecars/ that the catalog does not know (orphans: a \
            run killed between storing a file and recording it), the files the catalog names that are not there \
            (missing), and those whose size is not the catalog's. The trash, tapes and run logs are not checked. \
            Memory stays flat: the store is listed a page at a time and the catalog read a shard (originals/ab/) at \
            a time, both in byte order. While an import runs, a file it has stored but not yet recorded shows as \
            an orphan; --repair takes the library's lock, so it never runs beside one.

            With --store s3://BUCKET/PREFIX the catalog is compared with that store (a copy made by `cairn store \
            copy`) instead of the library's folder; the store is found as `cairn store copy --help` says.

            --repair mends what loses nothing, under the library's lock: an orphan derived file is deleted; a \
            missing or wrong derived file (thumbnail, preview, clip) is deleted and its item sent back to the lane \
            that makes it, so the next `cairn import` makes it again; a store other than the folder is sent what \
            it lacks from the folder. An original or a sidecar is never deleted: orphans among them are kept (the \
            next import of their source records them), and a missing one is only reported. In a store, uploads \
            left unfinished over a week ago (a killed run's, never resumed; S3 bills their parts) are aborted, as \
            every import into the store does at its end.

            Exit status: 0 when the catalog and the files agree (or every difference was mended), 3 when \
            differences remain (each is named, with what was done), 75 when --repair finds the library locked, \
            1 when the check could not run.
            """
    )

    @Option(name: .customLong("store"), help: "Check this store (s3://BUCKET or s3://BUCKET/PREFIX) instead of the library's folder.")
    var store: String?

    @Flag(name: .customLong("repair"), help: "Mend what can be mended without losing anything (see above).")
    var repair = false

    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        if let store {
            do { _ = try S3Location(parsing: store) } catch { throw ValidationError(error.description) }
        }
    }

    func run() async throws {
        let root = try library.existingRoot()
        var remaining = 0
        try await CatalogAccess.reportingFailures {
            if repair {
                remaining = try await CatalogAccess.changingExisting(library, catalog: catalog, command: "check --repair") {
                    try await check(root: root, catalog: $1)
                }
            } else {
                remaining = try await CatalogAccess.readingExisting(library, catalog: catalog) { try await check(root: root, catalog: $1) }
            }
        }
        if remaining > 0 { throw ExitCode(ExitStatus.someFilesFailed.rawValue) }
    }

    /// Runs the check and prints each finding and the summary; how many differences remain.
    private func check(root: String, catalog: any LibraryCatalog) async throws -> Int {
        let folder = FolderStore(root: root)
        let target: any ObjectStore
        var s3: S3Store?
        // The store named, else the one the library's files live in (`import --store` recorded it).
        if let store = store ?? LibraryLayout(root: root).recordedStore {
            let settings = try S3Settings.resolve(store)
            s3 = try S3Store(settings: settings)
            target = s3!
        } else {
            target = folder
        }
        let repairer = repair ? CheckRepair(store: target, catalog: catalog, libraryFolder: s3 == nil ? nil : folder) : nil
        let mended = Locked(0)
        var check = StoreCheck(catalog: catalog, store: target)
        check.trashed = try await StoreCheck.trashedPaths(catalog)
        // A folder's page costs a read of the shard folder it falls in (some thousands of names): pages that size
        // read each folder about once. S3 gives at most 1,000 keys a page.
        if s3 == nil { check.pageSize = 5000 }
        check.onFinding = { finding in
            var line = Self.describe(finding)
            if let repairer {
                switch await repairer.mend(finding) {
                case .mended(let what):
                    mended.withLock { $0 += 1 }
                    line += ": " + what
                case .left(let why):
                    line += ": " + why
                }
            }
            Output.line(line)
        }
        let report = try await closing({ await s3?.close() }) {
            let report = try await check.run()
            if repair, let s3 {
                do {
                    let cleared = try await s3.clearAbandonedWrites(now: Date())
                    if cleared > 0 { Output.line("aborted \(cleared) unfinished upload(s) begun over a week ago") }
                } catch {
                    Output.line("left the unfinished uploads begun over a week ago: \(error)")
                }
            }
            return report
        }
        let found = report.orphans + report.missing + report.sizeMismatches
        let repaired = mended.withLock { $0 }
        var summary = "Checked \(report.catalogFiles) file(s) the catalog names against \(report.storedObjects) in "
            + "\(target.description): \(report.orphans) orphan(s), \(report.missing) missing, "
            + "\(report.sizeMismatches) of another size"
        if report.trashedObjects > 0 { summary += "; \(report.trashedObjects) in the trash until purged" }
        if repair { summary += "; \(repaired) mended" }
        Output.line(summary + ".")
        return found - repaired
    }

    static func describe(_ finding: StoreCheck.Finding) -> String {
        switch finding {
        case .orphan(let object): return "orphan   \(object.key.text) (\(object.size) bytes, not in the catalog)"
        case .missing(let file): return "missing  \(file.path) (\(file.role.rawValue) of \(file.checksum))"
        case .sizeMismatch(let file, let stored):
            return "size     \(file.path) (\(file.role.rawValue): \(stored) bytes, the catalog says \(file.size ?? 0))"
        }
    }
}
