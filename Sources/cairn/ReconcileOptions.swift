import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnReconcile

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
    var strictness: DeletionStrictness?

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

    @Flag(name: .customLong("check-destination"),
          help: "Check every asset at the destination this run, however recent the last full check (default: every check_destination_days).")
    var checkDestination = false

    @Option(name: .customLong("destination-drift"),
            help: "What to do with content deleted at the destination after cairn brought it there: report (default) or restore.")
    var destinationDrift: DriftMending?

    func validate() throws {
        if let config, config.isEmpty { throw ValidationError("--config needs a file path.") }
    }

    /// For a command's `validate()`: refuses a bad value in a flag, a `CAIRN_*` variable or the config file
    /// (the message names which), and with `needsSource`, a run with no source folder anywhere.
    func check(libraryRoot: String, source: String? = nil, needsSource: Bool = false) throws {
        let settings: CairnConfiguration
        do { settings = try resolved(libraryRoot: libraryRoot, source: source) } catch {
            throw ValidationError(error.description)
        }
        if needsSource, settings.source == nil {
            throw Self.noSource(libraryRoot: libraryRoot)
        }
    }

    static func noSource(libraryRoot: String) -> ValidationError {
        ValidationError("no source folder: give one as SOURCE, or set `source` in \(libraryRoot)/cairn.toml or $CAIRN_SOURCE")
    }

    /// The settings to run with (already checked by `check` in `validate()`; a file edited since is still
    /// reported as a usage error).
    func resolve(libraryRoot: String, source: String? = nil) throws -> CairnConfiguration {
        do { return try resolved(libraryRoot: libraryRoot, source: source) } catch {
            throw Output.fail(error.description, .usage)
        }
    }

    private func resolved(libraryRoot: String, source: String?) throws(ConfigurationError) -> CairnConfiguration {
        let flags = CairnConfiguration.Overrides(
            source: source, quarantineDays: quarantineDays, strictness: strictness, maxDelete: maxDelete,
            vanishThreshold: vanishThreshold, applyDeletions: applyDeletions, destinationDrift: destinationDrift)
        return try CairnConfiguration.resolve(configFile: config, libraryRoot: libraryRoot, flags: flags)
    }
}

extension DeletionStrictness: ExpressibleByArgument {}
extension DriftMending: ExpressibleByArgument {}
