import CairnCatalog
import CairnLibrary
import CairnNarration
import Foundation

/// The narration of one run: what the person sees (the output the command chose), the run's NDJSON log under
/// the library, and an in-memory copy from which the run's summary is stored in the catalog.
public struct RunNarration: Sendable {
    public let runID: String
    public let narrator: Narrator
    private let memory: InMemoryNarrationHandler
    private let log: RunLogWriter?

    /// Run logs kept under `<library>/runs/`.
    public static let keptRunLogs = 30

    /// - Parameter keepsLog: false for runs that must leave the library untouched (`cairn dry-run`).
    public init(layout: LibraryLayout, output: any NarrationHandler, startedAt: Date = Date(), keepsLog: Bool = true) {
        let runID = RunID.make(at: startedAt)
        self.runID = runID
        memory = InMemoryNarrationHandler(keepsEvents: false)
        // A library whose runs/ cannot be written still imports; the log is a convenience, the catalog is the record.
        log = keepsLog ? try? RunLogStore(directory: layout.runLogDirectory, keep: Self.keptRunLogs).makeWriter(runID: runID) : nil
        var handlers: [any NarrationHandler] = [output, memory]
        if let log { handlers.append(log) }
        narrator = Narrator(runID: runID, handler: MultiplexNarrationHandler(handlers))
    }

    /// The run as narrated so far: timeline, counts, failures.
    public func summary(review: ReviewInfo? = nil) -> RunSummary? { memory.state.summary(review: review) }

    /// The summary as the JSON the catalog keeps for `cairn status`.
    public func summaryJSON(review: ReviewInfo? = nil) -> String? {
        guard let summary = summary(review: review), let data = try? NarrationJSON.encoder().encode(summary) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Flushes the run log.
    public func close() { try? log?.close() }
}
