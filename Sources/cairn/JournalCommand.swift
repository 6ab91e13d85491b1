import ArgumentParser

/// `cairn journal list|show`: the library's record of every trash, restore and purge.
struct JournalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Show the deletion journal: every trash, restore and purge, written before it happened.",
        subcommands: [JournalListCommand.self, JournalShowCommand.self],
        defaultSubcommand: JournalListCommand.self
    )
}
