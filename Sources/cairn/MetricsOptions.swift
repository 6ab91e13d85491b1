import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnImport
import CairnMetrics

/// `--metrics-file` and `--metrics-push`, shared by `import` and `sync`: Prometheus metrics for runs from cron.
struct MetricsOptions: ParsableArguments {
    @Option(name: .customLong("metrics-file"),
            help: "Write the run's Prometheus metrics to this file at every phase and at the end (for node_exporter's textfile collector: a *.prom file in its folder; default: metrics_file in cairn.toml).")
    var file: String?

    @Option(name: .customLong("metrics-push"),
            help: "Push the run's metrics to this Prometheus Pushgateway at the end, grouped by job and library so each run replaces the last (default: metrics_push in cairn.toml).")
    var push: String?

    func validate() throws {
        if let file, file.isEmpty { throw ValidationError("--metrics-file needs a file path.") }
        if let push {
            do { _ = try Pushgateway(url: push) } catch { throw ValidationError("--metrics-push: \(error.description)") }
        }
    }

    /// The settings after cairn.toml and CAIRN_METRICS_*; `nil` when no metrics are asked for.
    func settings(libraryRoot: String, quarantineDays: Int?) throws -> RunMetricsSession.Settings? {
        let configuration = try CairnConfiguration.forCommand(libraryRoot: libraryRoot)
        let file = self.file ?? configuration.metricsFile
        let pushURL = self.push ?? configuration.metricsPush
        var gateway: Pushgateway?
        if let pushURL {
            do { gateway = try Pushgateway(url: pushURL) } catch { throw ValidationError("metrics_push: \(error.description)") }
        }
        let settings = RunMetricsSession.Settings(
            file: file, push: gateway, version: CairnVersion.current,
            quarantineDays: quarantineDays ?? configuration.reconcile.quarantineDays,
            report: { Output.error($0) })
        return settings.isEnabled ? settings : nil
    }
}
