import ArgumentParser

/// `cairn trash purge`: the library's trash.
struct TrashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trash",
        abstract: "Manage the library's trash (files moved there by syncs, restorable until purged).",
        subcommands: [TrashPurgeCommand.self]
    )
}
