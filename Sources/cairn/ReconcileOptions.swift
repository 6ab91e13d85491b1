import ArgumentParser
import CairnCore
import CairnWorker

/// `--config` and the reconciliation flags, for `cairn sync` / `cairn dry-run` / `cairn config`.
///
/// Precedence: these flags, then `CAIRN_*` variables, then the config file, then defaults.
struct ReconcileOptions: ParsableArguments {
    @Option(name: .customLong("config"),
            help: "The TOML config file to read (default: <library>/cairn.toml, if it exists).")
    var config: String?

    @Option(name: .customLong("quarantine-days"),
            help: "Days a deletion confirmed at the source waits before its library copy may be trashed (0...90, default 14).")
    var quarantineDays: Int?

    @Option(name: .customLong("strictness"),
            help: "trusting (default): content gone without proof is trashed too; strict: it waits for review.")
    var strictness: String?

    @Option(name: .customLong("max-delete"), help: "Trash at most this many assets per run; the rest wait for the next run.")
    var maxDelete: Int?

    @Option(name: .customLong("vanish-threshold"),
            help: "Hold every deletion when more than this fraction of the last run's files vanished (0...1, default 0.5).")
    var vanishThreshold: Double?

    @Flag(name: .customLong("apply-deletions"), inversion: .prefixedNo,
          help: "Trash past-quarantine candidates in the library (default: only report them).")
    var applyDeletions: Bool?

    @Flag(name: .customLong("accept-vanished"),
          help: "The files that vanished from the source were removed on purpose: stand the mass-vanish rail down for this run.")
    var acceptVanished = false

    func validate() throws {
        if let config, config.isEmpty { throw ValidationError("--config needs a file path.") }
    }

    /// The settings to run with; a bad value anywhere is a usage error naming its file, variable or flag.
    /// `lanes` and `clips` come from the caller's own pipeline flags, when it has them.
    func resolve(libraryRoot: String, source: String? = nil, lanes: String? = nil, clips: Bool? = nil) throws -> CairnConfiguration {
        let flags = CairnConfiguration.Overrides(
            source: source, quarantineDays: quarantineDays, strictness: strictness, maxDelete: maxDelete,
            vanishThreshold: vanishThreshold, applyDeletions: applyDeletions, lanes: lanes, clips: clips)
        do {
            return try CairnConfiguration.resolve(configFile: config, libraryRoot: libraryRoot, flags: flags)
        } catch {
            Output.error(error.description)
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}
