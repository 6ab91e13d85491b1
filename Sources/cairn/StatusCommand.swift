import ArgumentParser
import CairnLibrary
import CairnWorker
import Foundation

/// `cairn status`: when the library last synced, how the last run went, and what waits for review.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the library's last run: outcome, when, its phase timeline, counts and failed files."
    )

    @OptionGroup var library: LibraryOption

    @Flag(help: "Print the status as one JSON object.")
    var json = false

    func run() throws {
        let path = library.resolvedPath
        guard LibraryLayout.holdsLibrary(path) else {
            Output.error("\(path): no library here yet (run `cairn import FOLDER` first)")
            throw ExitCode(1)
        }
        let opened = try Library(root: path, readOnly: true)
        defer { opened.close() }
        let report = try LibraryStatus.report(library: opened)
        let now = Date()
        if json {
            Output.line(report.json(now: now))
        } else {
            FileHandle.standardOutput.write(Data(report.text(now: now).utf8))
        }
    }
}
