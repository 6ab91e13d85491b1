import ArgumentParser
import CairnCatalog
import CairnWorker
import Foundation

/// `--source DIR`: which of the library's sources a pending verb applies to (default: every source).
struct SourceSelection: ParsableArguments {
    @Option(name: .customLong("source"), help: "Only this source folder of the library (default: every source).")
    var source: String?

    func validate() throws {
        if let source, source.isEmpty { throw ValidationError("--source needs a folder path.") }
    }

    /// The chosen sources; an error naming the folder when the library never synced it.
    func sources(in store: ReconcileStore) throws -> [SourceRecord] {
        let all = try store.sources()
        guard let source else { return all }
        let resolved = URL(fileURLWithPath: source).resolvingSymlinksInPath().path
        let matching = all.filter { $0.rootPath == source || $0.rootPath == resolved }
        guard !matching.isEmpty else {
            throw CommandError("\(source): not a source of this library (known: \(all.map(\.rootPath).joined(separator: ", ")))")
        }
        return matching
    }
}
