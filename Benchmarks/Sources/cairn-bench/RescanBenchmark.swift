import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import Foundation

/// `cairn-bench rescan`: the second import of an unchanged folder, which must hash and copy nothing.
struct RescanBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rescan",
        abstract: "Import a folder, then time importing it again unchanged (warm): nothing may be hashed or copied."
    )

    @Option(help: "The folder to import (e.g. made by `cairn-bench corpus --small-files 100000`).")
    var corpus: String

    @Option(help: "A library folder to use; it is created if missing. Default: a fresh one under the temp folder.")
    var library: String?

    @Option(help: "Timed warm re-imports; the best is kept and all are printed.")
    var repeats = 3

    func run() async throws {
        let root = library ?? NSTemporaryDirectory() + "cairn-bench-rescan-\(UUID().uuidString)"
        defer { if library == nil { try? FileManager.default.removeItem(atPath: root) } }
        var start = ContinuousClock.now
        let first: ImportSummary? = try await LibraryImport.run(root: root, options: ImportOptions(source: corpus))
        let firstTime = (ContinuousClock.now - start).seconds
        var times: [Double] = []
        var last: ImportSummary?
        for _ in 0..<max(1, repeats) {
            start = ContinuousClock.now
            // Everything a real `cairn import` does: open the library and catalog, walk, diff, record the run.
            last = try await LibraryImport.run(root: root, options: ImportOptions(source: corpus))
            times.append((ContinuousClock.now - start).seconds)
        }
        guard let first, let last else { return }
        var table = Table(header: ["import", "seconds", "files seen", "hashed", "bytes copied"])
        table.rows.append(["first", format(firstTime, 3), "\(first.counts.filesSeen)", "\(first.counts.hashed)", "\(first.counts.bytesCopied)"])
        table.rows.append(["second (warm, best of \(times.count))", format(times.min()!, 3), "\(last.counts.filesSeen)",
                           "\(last.counts.hashed)", "\(last.counts.bytesCopied)"])
        print(table.render())
        print("all warm runs: " + times.map { format($0, 3) }.joined(separator: ", ") + " s; peak RSS \(format(Peers.peakResidentMiB(), 0)) MiB")
        guard last.counts.hashed == 0, last.counts.bytesCopied == 0 else {
            throw ValidationError("the unchanged re-import did work it should not have done")
        }
    }
}
