import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnRun
import Foundation

/// `cairn config`: the settings a sync would run with, after flags, environment and file.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the settings a sync would use, resolved from flags, CAIRN_* variables, the config file and defaults.",
        discussion: """
            Keys of cairn.toml and their variables: source (CAIRN_SOURCE), quarantine_days \
            (CAIRN_QUARANTINE_DAYS), strictness (CAIRN_STRICTNESS), max_delete (CAIRN_MAX_DELETE), \
            vanish_threshold (CAIRN_VANISH_THRESHOLD), apply_deletions (CAIRN_APPLY_DELETIONS), lanes \
            (CAIRN_LANES), clips (CAIRN_CLIPS), destination (CAIRN_DESTINATION), immich_url (CAIRN_IMMICH_URL), \
            immich_api_key_file (CAIRN_IMMICH_API_KEY_FILE), metrics_file (CAIRN_METRICS_FILE), metrics_push \
            (CAIRN_METRICS_PUSH), queue (CAIRN_QUEUE), catalog (CAIRN_CATALOG), check_destination_days \
            (CAIRN_CHECK_DESTINATION_DAYS), destination_drift (CAIRN_DESTINATION_DRIFT), time_zone \
            (CAIRN_TIME_ZONE), memory (CAIRN_MEMORY, e.g. 512M or 2G); the key itself is shown as ***, a \
            queue's or catalog's password never. Exit code 64 names the file, variable or flag of a bad value.
            """
    )

    @OptionGroup var library: LibraryOption
    @OptionGroup var reconcile: ReconcileOptions

    func validate() throws {
        try reconcile.check(libraryRoot: library.resolvedPath)
    }

    func run() throws {
        let resolved = try reconcile.resolve(libraryRoot: library.resolvedPath)
        let settings = resolved.reconcile
        // The destination's keys, read as a run reads them; the key itself is only ever said to be set, as ***.
        let immich = try CairnConfiguration.forCommand(libraryRoot: library.resolvedPath)
        let environment = ProcessInfo.processInfo.environment
        let keySource = immich.immichAPIKeyFile.map { "*** (from \($0))" }
            ?? (DestinationOptions.environmentKey(environment) != nil ? "*** (from the environment)" : "(none)")
        let postgres = { (url: String) in
            guard RunAssembly.hasPostgres else { return "(refused: this cairn was built without PostgreSQL)" }
            return (try? PostgresLocation(url: url)).map(String.init(describing:)) ?? "(not a PostgreSQL URL)"
        }
        let queue = resolved.queue.map(postgres), catalog = resolved.catalog.map(postgres)
        Output.line("""
            config file       \(resolved.file ?? "(none)")
            source            \(resolved.source ?? "(none)")
            quarantine_days   \(settings.quarantineDays)
            strictness        \(settings.strictness.rawValue)
            max_delete        \(settings.maxDelete.map(String.init) ?? "(no cap)")
            vanish_threshold  \(settings.vanishThreshold)
            apply_deletions   \(resolved.applyDeletions)
            lanes             \(resolved.lanes ?? "(defaults)")
            clips             \(resolved.clips)
            destination       \(immich.destination)
            immich_url        \(immich.immichURL ?? ProcessInfo.processInfo.environment["IMMICH_URL"] ?? "(none)")
            immich_api_key    \(keySource)
            metrics_file      \(immich.metricsFile ?? "(none)")
            metrics_push      \(immich.metricsPush ?? "(none)")
            queue             \(queue ?? "(none)")
            catalog           \(catalog ?? "(the library's SQLite file)")
            check_destination_days \(resolved.destinationCheck.everyDays)
            destination_drift \(resolved.destinationCheck.mending.rawValue)
            time_zone         \(resolved.timeZone ?? "(this machine's)")
            memory            \((immich.memory ?? .detected(.read())).description)
            """)
    }
}
