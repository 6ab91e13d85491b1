import ArgumentParser
import CairnCore

@main
struct Cairn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Import folders of photos and videos into a library, and keep the two in step.",
        subcommands: CommandRegistry.all
    )
}

/// Every subcommand, in the order `--help` lists them.
enum CommandRegistry {
    static let all: [any ParsableCommand.Type] = [
        ImportCommand.self,
        HashCommand.self,
        PendingCommand.self, JournalCommand.self, RestoreCommand.self, TrashCommand.self, ConfigCommand.self,
    ]
}
