import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import Foundation
import Synchronization

/// Stills whose clip waits for Live Photo pairing. A still with a movie of the same name beside it in the source is
/// most likely a Live Photo, and a Live Photo's clip is its own movie: synthesizing one would cost the run a video
/// encode per photo for nothing. Pairing runs after the lanes; the stills it leaves unpaired get their clip then.
package final class DeferredClips: Sendable {
    private let waiting = Mutex<(items: [ImportItem], stages: LibraryStages?)>(([], nil))

    func add(_ item: ImportItem) { waiting.withLock { $0.items.append(item) } }

    /// The stages that make the clips left to make after pairing (the run's newest page's).
    /// Syncing each file (the group commit ends with the lanes) and without this box (no cycle, and no deferring).
    func remember(_ stages: LibraryStages) {
        var stages = stages
        stages.syncsEachFile = true
        stages.deferredClips = nil
        waiting.withLock { $0.stages = stages }
    }

    /// The stills deferred so far, emptied, with the stages to make their clips.
    func take() -> (items: [ImportItem], stages: LibraryStages?) {
        waiting.withLock { state in
            defer { state.items = [] }
            return state
        }
    }

    /// The extensions a Live Photo's motion part takes, as phones and cameras write them.
    static let motionExtensions = ["MOV", "mov", "MP4", "mp4"]

    /// Whether the source holds a movie with the still's base name in the still's folder (`IMG_0001.HEIC` and
    /// `IMG_0001.MOV`). Blocking: a few `stat` calls.
    package static func hasMotionSibling(_ item: ImportItem) -> Bool {
        let path = item.sourcePath
        let name = FileSystem.baseName(of: path)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        let stem = path.dropLast(name.distance(from: dot, to: name.endIndex))
        return motionExtensions.contains { FileSystem.size(stem + "." + $0) != nil }
    }

    /// Clips for the deferred stills that pairing left unpaired (their same-named movie was not their motion),
    /// made by `stages` one at a time. Returns lines for the narration.
    package static func finish(_ deferred: [ImportItem], stages: LibraryStages, catalog: any AssetCatalog) async -> [String] {
        var made = 0, lines: [String] = []
        for item in deferred {
            do {
                if try await catalog.pair(of: item.checksum) != nil { continue }
                // No scheduler here: the clip's rows (its file already fsynced) are written at once.
                if let rows = try await stages.synthesizeClip(item).products as? StageRows {
                    try await catalog.saveImportItemStates([], with: rows)
                }
                made += 1
            } catch {
                lines.append("no clip for \(item.relativePath): \(error)")
            }
        }
        if made > 0 {
            lines.insert("made \(made) clip\(made == 1 ? "" : "s") after pairing for stills whose same-named movie was not "
                         + "their Live Photo", at: 0)
        }
        return lines
    }
}
