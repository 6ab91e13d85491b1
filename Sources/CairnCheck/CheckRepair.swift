import CairnCatalog
import CairnCore
import CairnStore

/// What `cairn check --repair` does with each finding: only what loses nothing. A derived file no asset names is
/// deleted; a missing or wrong derived file is deleted and its import item sent back to the lane that makes it, so
/// the next import makes it again; a store other than the library's folder is sent what it lacks from the folder.
/// An original or a sidecar is never deleted, and one that is missing is only reported.
public struct CheckRepair: Sendable {
    /// What became of one finding.
    public enum Action: Sendable, Equatable {
        case mended(String)
        case left(String)
    }

    public let store: any ObjectStore
    public let catalog: any ItemCatalog & BrowseCatalog
    /// The library's folder when `store` is another store (an S3 copy): what the store lacks is put from here.
    public let libraryFolder: FolderStore?

    public init(store: any ObjectStore, catalog: any ItemCatalog & BrowseCatalog, libraryFolder: FolderStore?) {
        self.store = store
        self.catalog = catalog
        self.libraryFolder = libraryFolder
    }

    public func mend(_ finding: StoreCheck.Finding) async -> Action {
        do {
            switch finding {
            case .orphan(let object):
                guard Self.isDerivedName(object.key.text) else {
                    return .left("kept: no asset of the catalog names it (a run stopped between storing and recording "
                                 + "it?); importing its source again records it")
                }
                try await store.delete(object.key)
                return .mended("deleted: a derived file no asset names")
            case .missing(let file):
                return try await restore(file, replacing: false)
            case .sizeMismatch(let file, _):
                return try await restore(file, replacing: true)
            }
        } catch {
            return .left("not mended: \(error)")
        }
    }

    private func restore(_ file: CatalogFile, replacing: Bool) async throws -> Action {
        let key = try ObjectKey(file.path)
        if let libraryFolder, let held = try await libraryFolder.size(of: key), file.size.map({ $0 == held }) ?? true {
            if replacing { try await store.delete(key) }
            _ = try await store.put(key, fromFile: libraryFolder.root + "/" + file.path)
            return .mended("copied again from the library's folder")
        }
        let lane: Lane
        switch file.role {
        case .thumbnail, .preview: lane = .thumbnail
        case .clip: lane = .synthesis
        case .original, .sidecar, .albumMetadata:
            return .left(replacing ? "left as found: cairn never deletes an original or a sidecar"
                                   : "not mended: cairn keeps no other copy (import its source again if it still has it)")
        }
        guard var record = try await catalog.importItem(file.checksum) else {
            return .left("not mended: no import item of \(file.checksum) to make it again")
        }
        if replacing { try await store.delete(key) }
        guard record.state.isTerminal else { return .mended("the next import makes it again (its item is unfinished)") }
        record.state = lane == .thumbnail ? .thumbnailing : .synthesizing
        record.inFlight = false
        try await catalog.saveImportItemStates([record], with: StageRows())
        return .mended("the next import makes it again (its item is back in the \(lane.rawValue) lane)")
    }

    /// `derived/ab/<40 hex>-…`: a name the stages give.
    static func isDerivedName(_ key: String) -> Bool {
        let parts = key.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == Substring(StoredFolder.derived.rawValue), parts[1].utf8.count == 2 else {
            return false
        }
        let name = parts[2].utf8
        guard name.count > 41, name[name.index(name.startIndex, offsetBy: 40)] == UInt8(ascii: "-") else { return false }
        let hex = name.prefix(40)
        return hex.allSatisfy { Checksum.nibble($0) != nil } && hex.starts(with: parts[1].utf8)
    }
}
