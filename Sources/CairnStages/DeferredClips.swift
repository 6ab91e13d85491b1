import CairnCore
import CairnLibrary

/// Stills whose clip question waits for Live Photo pairing. A still with a movie of the same name beside it in the
/// source is most likely a Live Photo, and a Live Photo's clip is its own movie: synthesizing one would cost the run
/// a video encode per photo for nothing. Such a still's synthesis phase is left where it stands (the item is not
/// ready, and a run that stops here resumes it); pairing runs after the lanes; then the run sends the stills
/// through their synthesis phase again, where a paired still needs no clip and an unpaired one gets it, with the
/// timeouts, retries, marks and crash guard of any phase.
package final class DeferredClips: Sendable {
    /// What a still beside a same-named movie does in its synthesis phase.
    package enum Decision: Sendable, Equatable {
        /// Pairing has not run yet: the phase waits for the pass after it.
        case waitForPairing
        /// Paired: its movie is its clip.
        case noClip
        /// Not paired (the movie is not its motion): the clip is made.
        case makeClip
    }

    private struct State {
        var waiting: [ImportItem] = []
        /// The stills found paired once pairing ran; nil before.
        var paired: Set<Checksum>?
    }

    private let state = Locked(State())

    package init() {}

    func decide(_ item: ImportItem) -> Decision {
        state.withLock { state in
            guard let paired = state.paired else {
                state.waiting.append(item)
                return .waitForPairing
            }
            return paired.contains(item.checksum) ? .noClip : .makeClip
        }
    }

    /// The stills that waited so far, taken (each is asked for once, after the lanes).
    package func takeWaiting() -> [ImportItem] {
        state.withLock { state in
            defer { state.waiting = [] }
            return state.waiting
        }
    }

    /// Pairing ran: `paired` are the waiting stills that have their movie; from now on a still decides at once.
    package func pairingSettled(paired: Set<Checksum>) {
        state.withLock { $0.paired = paired }
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
}
