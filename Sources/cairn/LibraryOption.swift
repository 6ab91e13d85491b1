import ArgumentParser
import CairnLibrary

/// `--library DIR`, shared by every command that works on a library.
struct LibraryOption: ParsableArguments {
    @Option(name: .customLong("library"),
            help: "The library folder (default: $CAIRN_LIBRARY, else $XDG_DATA_HOME/cairn/library, else ~/.local/share/cairn/library).")
    var path: String?

    var resolvedPath: String { path ?? LibraryLayout.defaultRoot() }

    func validate() throws {
        if let path, path.isEmpty { throw ValidationError("--library needs a folder path.") }
    }
}
