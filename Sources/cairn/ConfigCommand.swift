import ArgumentParser
import CairnCore
import CairnWorker

/// `cairn config`: the settings a sync would run with, after flags, environment and file.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Print the settings a sync would use, resolved from flags, CAIRN_* variables, the config file and defaults.",
        discussion: """
            Keys of cairn.toml and their variables: source (CAIRN_SOURCE), quarantine_days \
            (CAIRN_QUARANTINE_DAYS), strictness (CAIRN_STRICTNESS), max_delete (CAIRN_MAX_DELETE), \
            vanish_threshold (CAIRN_VANISH_THRESHOLD), apply_deletions (CAIRN_APPLY_DELETIONS), lanes \
            (CAIRN_LANES), clips (CAIRN_CLIPS). Exit code 64 names the file, variable or flag of a bad value.
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
            """)
    }
}
