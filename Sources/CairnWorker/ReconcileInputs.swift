import CairnCatalog
import CairnCore
import CairnLibrary
import CairnReconcile
import Foundation
import Glibc

/// Gathers what `Reconciler.reconcile` needs for one source from the catalog and the source root,
/// so `cairn sync` and `cairn dry-run` build identical inputs (read-only: nothing is written).
public enum ReconcileInputs {
    /// The source root's state and marker, probed without following the root if it is a symlink to nowhere.
    /// `hadMarker` comes from the catalog (`load` fills it); `unreadable` are the scan's issues, "path: reason".
    public static func probe(sourceRoot: String, unreadable: [String] = []) -> SourceScanFacts {
        var info = stat()
        let root: SourceScanFacts.RootState
        if stat(sourceRoot, &info) != 0 {
            root = .missing
        } else {
            root = (info.st_mode & S_IFMT) == S_IFDIR ? .directory : .notADirectory
        }
        let hasMarker = root == .directory && FileSystem.exists(sourceRoot + "/" + SourceScanFacts.markerName)
        return SourceScanFacts(sourceRoot: sourceRoot, root: root, hasMarker: hasMarker,
                               ioErrorCount: unreadable.count, firstIOError: unreadable.first)
    }

    /// The engine's input for `sourceID`.
    ///
    /// - Parameters:
    ///   - current: this scan, source-relative path → checksum. A file that could not be hashed must
    ///     not simply be left out (it would read as deleted): count it in `scan`'s I/O errors.
    ///   - scan: from `probe`; its `hadMarker` is replaced by what the catalog remembers.
    public static func load(
        library: Library, sourceID: Int64, current: [String: Checksum], scan: SourceScanFacts,
        settings: ReconcileSettings, now: Date, runID: String, acceptMassVanish: Bool = false
    ) throws -> Reconciler.Input {
        let store = ReconcileStore(catalog: library.catalog)
        let facts = try store.facts(sourceID: sourceID)
        var scan = scan
        scan.hadMarker = facts.hadMarker
        return Reconciler.Input(
            state: try store.loadState(sourceID: sourceID), previous: try store.healthySnapshot(sourceID: sourceID),
            current: current, library: try library.catalog.assetChecksums(), scan: scan, settings: settings, now: now,
            runID: runID, isFirstRun: facts.isFirstRun, acceptMassVanish: acceptMassVanish,
            heldElsewhere: try library.catalog.checksumsHeld(bySourcesOtherThan: sourceID))
    }
}
