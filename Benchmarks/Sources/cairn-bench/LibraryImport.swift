import CairnCatalog
import CairnImport
import CairnLibrary
import CairnNarration

/// An import into the library at `root` as the command opens it: the folder, then its SQLite catalog beside it.
enum LibraryImport {
    static func run(root: String, options: ImportOptions,
                    output: any NarrationHandler = DiscardingNarrationHandler()) async throws -> ImportSummary {
        let library = try Library(root: root)
        defer { library.close() }
        let catalog = try library.openCatalog()
        defer { catalog.close() }
        return try await ImportRun(library: library, catalog: catalog, options: options,
                                   output: output).run()
    }
}
