import ArgumentParser
import CairnCore
import CairnStatus

/// `cairn version`: cairn's version, and with `--verbose` the libraries it runs with.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print cairn's version; with --verbose, the versions of SQLite, OpenSSL and the media libraries it runs with.")

    @Flag(name: .shortAndLong, help: "Also print each library's version as it reports itself at run time.")
    var verbose = false

    func run() {
        guard verbose else { return Output.line("cairn \(CairnVersion.current)") }
        let versions = ComponentVersions.all
        let width = versions.map(\.name.count).max() ?? 0
        for (name, version) in versions {
            Output.line(name + String(repeating: " ", count: width - name.count + 2) + version)
        }
    }
}
