import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMetrics
import CairnNarration
import CairnStatus
import Foundation

/// A cron run's metrics: written to the metrics file at every phase boundary and at the end (so a hung run shows
/// as one), and pushed to a Pushgateway at the end. A metrics file or push that fails is reported, never fatal.
public final class RunMetricsSession: Sendable {
    public struct Settings: Sendable {
        public var file: String?
        public var push: Pushgateway?
        public var version: String
        public var quarantineDays: Int?
        /// Said once per failure (a file that cannot be written, a Pushgateway that cannot be reached).
        public var report: @Sendable (String) -> Void

        public init(file: String?, push: Pushgateway?, version: String, quarantineDays: Int?,
                    report: @escaping @Sendable (String) -> Void) {
            self.file = file; self.push = push; self.version = version; self.quarantineDays = quarantineDays
            self.report = report
        }

        public var isEnabled: Bool { file != nil || push != nil }
    }

    private let settings: Settings
    private let recorder: RunMetricsRecorder
    private let layout: LibraryLayout
    private let catalog: any StatusCatalog
    private let labelRoot: String
    private let sourceRoot: String
    private let fileFailed = Locked(false)

    /// Reads the library's metrics from its catalog (either backend's) as they stand before the run; the narration
    /// keeps them current from here.
    public init(settings: Settings, layout: LibraryLayout, catalog: any StatusCatalog, labelRoot: String,
                sourceRoot: String) async throws {
        self.settings = settings
        self.layout = layout
        self.catalog = catalog
        self.labelRoot = labelRoot
        self.sourceRoot = sourceRoot
        let base = try await LibraryMetricsReader.read(layout: layout, catalog: catalog, labelRoot: labelRoot,
                                                       sourceRoot: sourceRoot, quarantineDays: settings.quarantineDays)
        let write = Self.writer(settings: settings, failed: fileFailed)
        recorder = RunMetricsRecorder(base: base, onBoundary: write)
    }

    /// The session for `settings`, when a run asked for metrics; nil when it did not.
    public static func starting(_ settings: Settings?, layout: LibraryLayout, catalog: any StatusCatalog,
                                labelRoot: String, sourceRoot: String) async throws -> RunMetricsSession? {
        guard let settings else { return nil }
        return try await RunMetricsSession(settings: settings, layout: layout, catalog: catalog, labelRoot: labelRoot,
                                           sourceRoot: sourceRoot)
    }

    /// Add to the run's narration.
    public var handler: any NarrationHandler { recorder }

    /// The run ended with `exitStatus`: the catalog's view now (this run included), with what only the run knows.
    public func finish(exitStatus: ExitStatus, sourceHealth: SourceHealth? = nil) async {
        var metrics = recorder.current
        if let read = try? await LibraryMetricsReader.read(layout: layout, catalog: catalog, labelRoot: labelRoot,
                                                            sourceRoot: sourceRoot, quarantineDays: settings.quarantineDays) {
            metrics = read
        }
        metrics.runInProgress = false
        metrics.lanes = []
        metrics.lastRunOutcome = exitStatus
        if let sourceHealth { metrics.sourceHealth = sourceHealth }
        await Self.deliver(metrics, settings: settings, failed: fileFailed)
    }

    /// Another process holds the library: says so in the metrics, reading the catalog (`source`) without its lock.
    public static func reportLocked(settings: Settings, source: any StatusCatalogSource, labelRoot: String,
                                    sourceRoot: String?) async {
        var metrics = Self.empty(labelRoot: labelRoot, sourceRoot: sourceRoot)
        if LibraryLayout.holdsLibrary(source.layout.root), let read = try? await source.reading({ catalog in
            try await LibraryMetricsReader.read(layout: source.layout, catalog: catalog, labelRoot: labelRoot,
                                                sourceRoot: sourceRoot, quarantineDays: settings.quarantineDays)
        }) {
            metrics = read
        }
        metrics.lastRunOutcome = .libraryLocked
        metrics.runInProgress = true
        await deliver(metrics, settings: settings, failed: Locked(false))
    }

    private static func empty(labelRoot: String, sourceRoot: String?) -> LibraryMetrics {
        let names = LibraryMetricsReader.labels(libraryRoot: labelRoot, sourceRoot: sourceRoot)
        return LibraryMetrics(library: names.library, source: names.source)
    }

    private static func writer(settings: Settings, failed: Locked<Bool>) -> @Sendable (LibraryMetrics) -> Void {
        { metrics in
            guard let file = settings.file else { return }
            write(MetricsExposition.render([metrics], version: settings.version), to: file, settings: settings, failed: failed)
        }
    }

    private static func write(_ text: String, to file: String, settings: Settings, failed: Locked<Bool>) {
        do { try MetricsFile.write(text, to: file) } catch {
            let first = failed.withLock { failed in defer { failed = true }; return !failed }
            if first { settings.report("metrics file \(file): \(error.operation): \(error.reason) (the run goes on without it)") }
        }
    }

    /// An error as one short line (the HTTP client's errors do not carry the URL, which may hold a password).
    private static func describe(_ error: any Error) -> String { String("\(error)".prefix(200)) }

    private static func deliver(_ metrics: LibraryMetrics, settings: Settings, failed: Locked<Bool>) async {
        let text = MetricsExposition.render([metrics], version: settings.version)
        if let file = settings.file { write(text, to: file, settings: settings, failed: failed) }
        if let push = settings.push {
            do { try await push.push(text, library: metrics.library) } catch {
                settings.report("metrics push to \(push.displayURL): \(Self.describe(error))")
            }
        }
    }
}
