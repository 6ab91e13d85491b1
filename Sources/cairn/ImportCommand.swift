import ArgumentParser
import CairnCore
import CairnWorker
import Foundation

/// `cairn import SOURCE`: bring a folder's photos and videos into the library.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a folder's photos and videos into the library.",
        discussion: """
            Walks SOURCE (never following symbolic links), hashes new and changed files (unchanged ones reuse \
            their cached SHA1), copies content the library does not hold yet into its content-addressed store, \
            and records everything in the catalog. Importing the same folder again does no work for files \
            that did not change. Identical content under two names becomes one asset.

            Progress is a live view on a terminal, plain lines otherwise (cron), NDJSON with --json. Every \
            event is also kept in <library>/runs/<run-id>.ndjson; `cairn status` reports the last run.

            Exit codes: 0 all imported; 3 some files failed (each is listed with its reason); 1 the run could \
            not start (missing source, unusable library); 75 another cairn process holds the library.
            """
    )

    @Argument(help: "The folder to import from (a phone dump, a camera card, a synced folder).")
    var source: String

    @OptionGroup var library: LibraryOption

    @OptionGroup var narration: NarrationOptions

    @Option(name: .customLong("hash-threads"), help: "How many files to hash at once (default: one per core).")
    var hashThreads: Int = System.coreCount

    @Option(name: .customLong("copy-threads"), help: "How many files to copy into the library at once.")
    var copyThreads: Int = 4

    func validate() throws {
        guard hashThreads >= 1, copyThreads >= 1 else { throw ValidationError("Thread counts must be at least 1.") }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory) else {
            throw ValidationError("\(source): no such folder (is the disk mounted?)")
        }
        guard isDirectory.boolValue else { throw ValidationError("\(source): not a folder; cairn imports folders") }
    }

    func run() async throws {
        let opened = try Library(root: library.resolvedPath)
        var options = ImportOptions(source: source)
        options.hashWorkers = hashThreads
        options.copyWorkers = copyThreads
        let (renderer, ticker) = narration.makeRenderer()
        defer { ticker?.cancel() }
        let summary: ImportSummary
        do {
            summary = try await ImportRun(library: opened, options: options, output: renderer).run()
        } catch let locked as LibraryLockedError {
            Output.error(locked.description)
            throw ExitCode(locked.exitStatus.rawValue)
        }
        ticker?.cancel()
        if narration.printsSummary { Output.line(SummaryText.render(summary, libraryRoot: opened.layout.root)) }
        if summary.exitStatus != .success { throw ExitCode(summary.exitStatus.rawValue) }
    }
}

/// The end-of-run summary a person reads.
enum SummaryText {
    static func render(_ summary: ImportSummary, libraryRoot: String) -> String {
        let c = summary.counts
        var lines = [
            "Imported \(summary.sourceRoot) into \(libraryRoot) (run \(summary.runID)) in \(String(format: "%.2f", summary.elapsedSeconds)) s",
            "  files seen   \(c.filesSeen)",
            "  new          \(c.imported)  (\(ByteCount.format(c.bytesCopied)) copied)",
            "  duplicates   \(c.duplicates)",
            "  unchanged    \(c.unchanged)",
            "  hashed       \(c.filesHashed)  (\(ByteCount.format(c.bytesHashed)))",
            "  skipped      \(c.skipped)  (\(summary.otherFiles) not media, \(summary.symlinksSkipped.count) symbolic links)",
            "  failed       \(c.failed)",
        ]
        for failure in summary.failures {
            lines.append("  failed: \(failure.relativePath): \(failure.reason)")
        }
        for issue in summary.scanIssues {
            lines.append("  unreadable: \(issue.relativePath): \(issue.reason)")
        }
        return lines.joined(separator: "\n")
    }
}

/// Human byte counts: 1.2 GB, 340 MB, 12 KB.
enum ByteCount {
    static func format(_ bytes: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 { value /= 1000; unit += 1 }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
