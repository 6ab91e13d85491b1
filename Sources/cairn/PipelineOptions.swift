import ArgumentParser
import CairnCore
import CairnImport
import CairnPipeline
import Foundation

/// The import pipeline's options, the same for `import` and `sync`: given on the command line they win over
/// `cairn.toml` (which `sync` reads); not given, the configuration or the defaults stand.
struct PipelineOptions: ParsableArguments {
    @Option(name: .customLong("lanes"), help: ArgumentHelp(
        "Lane widths and timeouts, e.g. transfer=4,thumbnail=2,synthesis=1,timeout.transfer=30s.", valueName: "spec"))
    var lanes: String?

    @Option(name: .customLong("clips"), help: "Whether stills get a short synthesized clip (on or off; default on).")
    var clips: Switch?

    @Option(name: .customLong("derivatives"), help: ArgumentHelp(
        "Off: archive only (hash, dedupe, copy, catalogue); a later run with it on makes the thumbnails, previews and clips.",
        valueName: "on|off"))
    var derivatives: Switch?

    @Option(name: .customLong("memory"), help: ArgumentHelp(
        "What decodes and encodes may hold at once, e.g. 512M or 2G (default: the cgroup's limit less a margin, or half the RAM).",
        valueName: "size"))
    var memory: String?

    @Option(name: .customLong("archives"), help: ArgumentHelp(
        "read: walk each .zip, .tar and .tgz in the source as a folder of its name, in place, without unpacking; ignore: leave archives alone (the default, or the config's archives).",
        valueName: "read|ignore"))
    var archives: ArchiveHandling?

    @Flag(name: .customLong("include-trashed"), help: """
        Import the photos a Google Takeout JSON says sat in Google Photos' trash (otherwise they are skipped, \
        named in the run's output, and never taken for deleted).
        """)
    var includeTrashed = false

    @Option(name: .customLong("exclude"), help: ArgumentHelp(
        "Leave out new files matching this shell pattern, any case: without a /, by name (*.MOV); with one, by path in the source (Trash/*). Repeatable.",
        valueName: "pattern"))
    var excludes: [String] = []

    @Option(name: .customLong("kind"), help: "Bring in only new photos or only new videos (photo or video).")
    var kind: String?

    @Option(name: .customLong("since"), help: ArgumentHelp(
        "Bring in only new files taken at or after this date (YYYY-MM-DD, UTC, or an ISO 8601 time); an unknown capture time is left out.",
        valueName: "date"))
    var since: String?

    @Option(name: .customLong("until"), help: ArgumentHelp(
        "Bring in only new files taken before this date (YYYY-MM-DD, UTC, or an ISO 8601 time); an unknown capture time is left out.",
        valueName: "date"))
    var until: String?

    @Option(name: .customLong("tag"), help: ArgumentHelp(
        "Tag the run's new assets with this (a/b nests in Immich); in the catalog, and in Immich with --destination immich. Repeatable.",
        valueName: "name"))
    var tags: [String] = []

    @Option(name: .customLong("stacks"), help: ArgumentHelp(
        "On: a RAW or HEIC with its JPEG, and a burst's frames, become one stack showing the JPEG or the cover (the default); off: every photo stands alone.",
        valueName: "on|off"))
    var stacks: Switch?

    @Flag(name: .customLong("session-tag"), help: "Also tag the run's new assets cairn/import/YYYY-MM-DDTHHMM (its start, this machine's time).")
    var sessionTag = false

    /// Whether the run tags its new assets (an Immich key then needs the tag permissions).
    var tagsAsked: Bool { !tags.isEmpty || sessionTag }

    /// What the run leaves out of its new content; a file left out is never taken for deleted.
    var filter: ImportFilter {
        var filter = ImportFilter()
        filter.excludes = excludes
        filter.kind = kind.flatMap(MediaKind.init(rawValue:))
        filter.since = since.flatMap(AssetFilterOptions.date)
        filter.until = until.flatMap(AssetFilterOptions.date)
        filter.includeTrashed = includeTrashed
        return filter
    }

    @Option(name: .customLong("max-errors"), help: "Stop taking new work after this many files failed.")
    var maxErrors: Int?

    @Option(name: .customLong("max-attempts"), help: "Tries per phase for timeouts and I/O errors, first one included.")
    var maxAttempts: Int?

    @Option(name: .customLong("report"), help: ArgumentHelp(
        "Write every imported file's outcome to this file as JSON lines.", valueName: "file"))
    var report: String?

    @Flag(name: .customLong("retry-failed"), help: """
        Try again the files an earlier run failed for crashing the worker (they stay failed otherwise, so one bad \
        file cannot crash every run); other failures are retried on every run anyway.
        """)
    var retryFailed = false

    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    func validate() throws {
        if let maxErrors, maxErrors < 1 { throw ValidationError("--max-errors must be at least 1.") }
        if let maxAttempts, maxAttempts < 1 { throw ValidationError("--max-attempts must be at least 1.") }
        if let kind, kind != "photo", kind != "video" { throw ValidationError("--kind must be photo or video, not \(kind).") }
        if let since, AssetFilterOptions.date(since) == nil { throw ValidationError("--since \(since): not a date (YYYY-MM-DD or ISO 8601).") }
        if let until, AssetFilterOptions.date(until) == nil { throw ValidationError("--until \(until): not a date (YYYY-MM-DD or ISO 8601).") }
        if let since = since.flatMap(AssetFilterOptions.date), let until = until.flatMap(AssetFilterOptions.date), since >= until {
            throw ValidationError("--since must be before --until: nothing could be brought in.")
        }
        for tag in tags where tag.trimmingCharacters(in: .whitespaces).isEmpty || tag.hasPrefix("/") || tag.hasSuffix("/")
            || tag.contains("//") {
            throw ValidationError("--tag '\(tag)': a tag needs a name, and its / only between names (Trips/2026).")
        }
        if let empty = excludes.first(where: { $0.trimmingCharacters(in: .whitespaces).isEmpty }) {
            throw ValidationError("--exclude needs a pattern, not '\(empty)'.")
        }
        _ = try applied(to: PipelineConfiguration.defaults(cores: 1))
        if let report {
            let folder = URL(fileURLWithPath: report).deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw ValidationError("--report \(report): the folder \(folder) does not exist")
            }
        }
    }

    /// `configuration` with every option given here applied on top.
    func applied(to configuration: PipelineConfiguration) throws -> PipelineConfiguration {
        var configuration = configuration
        if let lanes {
            do { configuration = try configuration.applying(laneSpec: lanes) } catch {
                throw ValidationError("--lanes: \(error.description)")
            }
        }
        if let clips { configuration.clipsEnabled = clips == .on }
        if let derivatives { configuration.derivativesEnabled = derivatives == .on }
        if let maxErrors { configuration.maxErrors = maxErrors }
        if let maxAttempts { configuration.maxAttempts = maxAttempts }
        if let memory {
            do { configuration.memory = try MemoryBudget.given(memory, origin: .option, limits: .read()) } catch {
                throw ValidationError("--memory: \(error.reason)")
            }
        }
        return configuration
    }

    /// Writes the --report file (when asked for) from a run's outcomes; a failure to write is said, not fatal.
    func writeReport(_ summary: ImportSummary?) {
        guard let report else { return }
        do {
            try FileOutcomeEntry.jsonLines(summary?.outcomes ?? []).write(to: URL(fileURLWithPath: report), options: .atomic)
        } catch {
            Output.error("\(report): the report cannot be written: \(error.localizedDescription)")
        }
    }
}

extension ArchiveHandling: ExpressibleByArgument {}
