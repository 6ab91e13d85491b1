import ArgumentParser

/// `cairn pending list|approve|exclude`: what waits before it may be trashed, and a person's say on it.
struct PendingCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pending",
        abstract: "List what waits before it may be trashed in the library, and approve or exclude it.",
        discussion: """
            A file deleted at the source waits in quarantine (default 14 days) before a sync may trash its \
            copy in the library; under strict strictness, content that disappeared without being seen \
            disappearing waits for review. `approve` lets the next sync trash it at once (the safety rails \
            still apply); `exclude` keeps it in the library whatever happens at the source.
            """,
        subcommands: [PendingListCommand.self, PendingApproveCommand.self, PendingExcludeCommand.self],
        defaultSubcommand: PendingListCommand.self
    )
}
