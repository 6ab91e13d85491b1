import ArgumentParser
import CairnCore
import CairnLibrary

/// `--library DIR`, shared by every command that works on a library.
struct LibraryOption: ParsableArguments {
    @Option(name: .customLong("library"),
            help: "The library folder (default: $CAIRN_LIBRARY, else $XDG_DATA_HOME/cairn/library, else ~/.local/share/cairn/library).")
    var path: String?

    var resolvedPath: String { path ?? LibraryLayout.defaultRoot() }

    /// `resolvedPath`, once a library was made there; else one line naming the folder (nothing imported yet, a
    /// wrong --library, an unmounted disk) and exit 1.
    func existingRoot() throws -> String {
        let root = resolvedPath
        guard LibraryLayout.holdsLibrary(root) else {
            throw Output.fail("\(root): no cairn library here (nothing imported yet, or a different --library?)")
        }
        return root
    }

    func validate() throws {
        if let path, path.isEmpty { throw ValidationError("--library needs a folder path.") }
    }
}
