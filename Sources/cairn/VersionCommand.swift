import ArgumentParser
import CairnCore
import CairnStatus
import Foundation

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
        // Without a library, the budget a run would have from CAIRN_MEMORY or this machine's limits.
        let budget: String
        do { budget = try MemoryBudget.resolved(option: nil, environment: ProcessInfo.processInfo.environment).description } catch {
            budget = "CAIRN_MEMORY: \(error.reason)"
        }
        Output.line("memory" + String(repeating: " ", count: max(2, width - 6 + 2)) + budget)
    }
}
