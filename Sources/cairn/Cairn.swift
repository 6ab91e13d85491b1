import ArgumentParser
import CairnCore
import CairnImport
import Glibc

struct Cairn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Import folders of photos and videos into a library, and keep the two in step.",
        discussion: """
            The library (default $CAIRN_LIBRARY, else $XDG_DATA_HOME/cairn/library, else \
            ~/.local/share/cairn/library) holds content-addressed originals, thumbnails and a SQLite catalog. \
            Start with `cairn import FOLDER`; then `cairn status`.
            """,
        version: CairnVersion.current,
        subcommands: CommandRegistry.all
    )
}

/// Every subcommand, in the order `--help` lists them.
enum CommandRegistry {
    static let all: [any ParsableCommand.Type] = common + [WorkerCommand.self, QueueCommand.self]

    private static let common: [any ParsableCommand.Type] = [
        ImportCommand.self,
        SyncCommand.self,
        WatchCommand.self,
        DryRunCommand.self,
        StatusCommand.self,
        AssetCommand.self,
        ListCommand.self,
        AlbumsCommand.self,
        HashCommand.self,
        ProbeCommand.self,
        ThumbnailCommand.self,
        SynthesizeCommand.self,
        TapeCommand.self,
        PendingCommand.self,
        JournalCommand.self,
        RestoreCommand.self,
        TrashCommand.self,
        StoreCommand.self,
        CheckCommand.self,
        ConfigCommand.self,
        ServeCommand.self,
        VersionCommand.self,
    ]
}

@main
enum CairnMain {
    static func main() async {
        // A closed pipe (`cairn import … | head`) must end the output, not kill the run mid-write.
        signal(SIGPIPE, SIG_IGN)
        MemoryTuning.limitMallocArenas()
        await Cairn.main()
    }
}
