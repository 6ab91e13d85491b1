import ArgumentParser
import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMetrics
import CairnNarration
import CairnStatus
import Foundation

/// What `--metrics-file` costs a run, measured directly: the newest run of a library is replayed, event by event
/// from its run log, through the same recorder, rendering and atomic file write a run with `--metrics-file` does
/// (a write at every phase boundary), plus the two catalog reads of its start and end; the time that takes is
/// set against the run's own wall time.
struct MetricsBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "metrics",
        abstract: "Replay a library's newest run through the metrics path and compare its cost with the run's wall time.")

    @Option(help: "A library a run was imported into (its runs/ holds the run's NDJSON log).")
    var library: String

    @Option(help: "Replays (min, median and max are printed).")
    var repeats = 11

    @Option(help: "Where the metrics file is written (default: a file in the temporary folder).")
    var output: String?

    func run() async throws {
        let opened = try Library(root: library, readOnly: true)
        let sqlite = try opened.openCatalog(readOnly: true)
        defer { sqlite.close() }
        let store = RunLogStore(directory: opened.layout.runLogDirectory)
        guard let runID = try store.runIDs().sorted().last else { throw ValidationError("\(library): no run log") }
        let events = try store.events(of: runID)
        guard case .runEnd(let end)? = events.last(where: { $0.kind == .runEnd })?.event, let runSeconds = end.durationSeconds else {
            throw ValidationError("run \(runID) has no runEnd event")
        }
        let file = output ?? NSTemporaryDirectory() + "/cairn-bench-metrics.prom"
        var seconds: [Double] = []
        var writes = 0
        for _ in 0..<repeats {
            let clock = ContinuousClock()
            let start = clock.now
            let base = try await LibraryMetricsReader.read(layout: opened.layout, catalog: sqlite,
                                                           sourceRoot: nil, quarantineDays: 14)
            let counter = Locked(0)
            let recorder = RunMetricsRecorder(base: base) { metrics in
                try? MetricsFile.write(MetricsExposition.render([metrics], version: CairnVersion.current), to: file)
                counter.withLock { $0 += 1 }
            }
            for event in events { recorder.handle(event) }
            var final = try await LibraryMetricsReader.read(layout: opened.layout, catalog: sqlite,
                                                            sourceRoot: nil, quarantineDays: 14)
            final.lastRunOutcome = .success
            try MetricsFile.write(MetricsExposition.render([final], version: CairnVersion.current), to: file)
            seconds.append((clock.now - start).seconds)
            writes = counter.withLock { $0 } + 1
        }
        seconds.sort()
        let median = seconds[seconds.count / 2]
        print("run \(runID): \(events.count) events, \(String(format: "%.3f", runSeconds)) s")
        print(String(format: "metrics path per run (s): min %.5f median %.5f max %.5f over %d replays; %d file writes each",
                     seconds[0], median, seconds[seconds.count - 1], repeats, writes))
        print(String(format: "share of the run's wall time: median %.3f %%, max %.3f %%",
                     median / runSeconds * 100, seconds[seconds.count - 1] / runSeconds * 100))
    }
}
