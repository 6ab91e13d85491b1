import ArgumentParser
import CairnCore
import CairnImport
import CairnMetrics
import CairnNarration
import CairnRun
import CairnStages

/// What every import and sync does around its run, written once: the renderer and its clock, the signals, the
/// files failed over every try, the metrics' last word, the exit code. `cairn import`, `cairn sync`, `cairn
/// dry-run` and each run of `cairn watch` differ only in the run itself and in what they print after it.
struct RunShell {
    var mode: NarrationOutputMode
    /// `cairn watch` handles its own signals across runs.
    var handlesSignals = true
    /// Handlers that see the narration beside the renderer (`cairn watch`'s status lines for systemd).
    var observers: [any NarrationHandler] = []
    /// The plan printed as JSON (`dry-run --json`): no narration on stdout.
    var silent = false

    /// How a run ended, for the shell: its exit status, and the source's health for the metrics (a sync's).
    struct Ending {
        var exitStatus: ExitStatus
        var sourceHealth: SourceHealth? = nil
    }

    /// Runs `run` on `context` with the narration it should write to; then `present` prints what a person reads
    /// (told how many files only an earlier try failed), and a run that did not succeed throws its exit code.
    func perform<Summary>(
        _ context: RunContext, cancellation: PipelineCancellation, failedFiles: FailedFiles,
        run: (any NarrationHandler) async throws -> Summary, ending: (Summary) -> Ending,
        present: (Summary, _ failedEarlier: Int) async throws -> Void
    ) async throws {
        let (renderer, ticker) = silent ? (DiscardingNarrationHandler(), nil) : NarrationOptions.makeRenderer(mode: mode)
        defer { ticker?.cancel() }
        let signals = handlesSignals ? SignalHandling.install(cancellation: cancellation) { name in
            Output.error("\(name): stopping; work in flight gets a few seconds to finish (again to exit at once)")
        } : nil
        defer { signals?.uninstall() }
        failedFiles.beginTry()
        let metrics = context.metrics
        let output = MultiplexNarrationHandler([renderer, failedFiles] + (metrics.map { [$0.handler] } ?? []) + observers)
        let summary = try await RunExit.reportingFailure(metrics: metrics) { try await run(output) }
        let end = ending(summary)
        let (exitStatus, failedEarlier) = failedFiles.settled(end.exitStatus)
        await metrics?.finish(exitStatus: exitStatus, sourceHealth: end.sourceHealth)
        ticker?.cancel()
        try await present(summary, failedEarlier)
        if exitStatus != .success { throw ExitCode(exitStatus.rawValue) }
    }
}
