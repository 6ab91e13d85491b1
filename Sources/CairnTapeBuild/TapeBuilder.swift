import CairnCatalog
import CairnCore
import CairnLibrary
import CairnMedia
import CairnNarration
import CairnStatus
import CairnTape
import Foundation

/// How a tape's clips are made.
public struct TapeBuildSettings: Sendable, Equatable {
    /// A video is cut after this many seconds.
    public var maxClipSeconds: Double
    /// How long a still is shown.
    public var stillSeconds: Double
    /// A slow pan and zoom over stills.
    public var kenBurns: Bool
    /// Clips made at once once the tape is playable (before that, one, with every core). Each lane holds a 1080p
    /// encoder's frames, so one lane keeps memory lowest and more lanes trade it for speed.
    public var lanes: Int
    /// The media engine's settings: `MediaConfiguration.within` the build's memory budget.
    public var media: MediaConfiguration

    public init(maxClipSeconds: Double = 6, stillSeconds: Double = 3, kenBurns: Bool = false, lanes: Int = 1,
                media: MediaConfiguration = MediaConfiguration()) {
        self.maxClipSeconds = maxClipSeconds
        self.stillSeconds = stillSeconds
        self.kenBurns = kenBurns
        self.lanes = lanes
        self.media = media
    }

    /// `settings` within `budget`: as many lanes as its clips' estimates fit (at least one, which runs whatever
    /// the budget), and the media engine the budget allows.
    public static func within(_ budget: MemoryBudget, _ settings: TapeBuildSettings,
                              cores: Int = System.coreCount) -> TapeBuildSettings {
        var fitted = settings
        let room = min(budget.bytes, budget.hardLimit ?? .max)
        let perLane = TapeClipEncoder.estimatedPeak(threads: settings.lanes == 1 ? cores : max(1, cores * 3 / 2))
        fitted.lanes = max(1, min(settings.lanes, Int(room / perLane)))
        fitted.media = .within(budget)
        return fitted
    }
}

/// Builds one tape of a library: selects its clips, takes those already made (by any earlier build of any tape)
/// from disk, makes the rest a few at a time in tape order on the blocking pool, and keeps the playlist and the
/// record current after every segment (`TapeBuildCore` decides what they hold), then joins the clips into one
/// file. The caller holds the library's lock; the library's catalog is either backend's.
public struct TapeBuilder: Sendable {
    public let layout: LibraryLayout
    public let catalog: any BrowsingCatalog
    public let name: String
    public let settings: TapeBuildSettings
    /// Where the library's files are when not in its folder: originals read from there, clips kept there too.
    public let clipStore: TapeClipStore?

    public init(layout: LibraryLayout, catalog: any BrowsingCatalog, name: String,
                settings: TapeBuildSettings = TapeBuildSettings(), clipStore: TapeClipStore? = nil) {
        self.layout = layout
        self.catalog = catalog
        self.name = name
        self.settings = settings
        self.clipStore = clipStore
    }

    /// Builds the tape, telling `news` as it goes (the `tape…` events of the build's narration).
    public func build(_ selection: TapeSelection, news: @escaping @Sendable (TapeEvent) -> Void) async throws
        -> TapeBuildReport
    {
        try TapeShelf.validate(name: name)
        let browser = LibraryBrowser(layout: layout, catalog: catalog)
        let entries = try await selection.entries(browser: browser)
        guard !entries.isEmpty else {
            throw TapeSelectionError(description: "no asset in \(layout.root) matches the selection")
        }
        let shelf = TapeShelf(layout: layout)
        let keys = entries.map(key)
        try FileManager.default.createDirectory(atPath: shelf.folder(name), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: layout.tapeClipsDirectory, withIntermediateDirectories: true)
        let created = (try? shelf.manifest(name))?.created ?? Date()
        let manifest = TapeManifest(name: name, created: created, clips: zip(entries, keys).map { entry, key in
            TapeManifest.Clip(contentSHA1: entry.contentSHA1, kind: entry.kind, sourcePath: entry.displayPath,
                              captureTime: entry.captureTime, folderName: key)
        })
        let progress = try TapeProgress(
            core: TapeBuildCore(clipURIPrefixes: keys.map(shelf.clipURIPrefix)), manifest: manifest, shelf: shelf,
            entries: entries, news: news)

        var made = keys.map(shelf.completedClip)
        var stored = Set<String>()
        if let clipStore {
            stored = try await clipStore.storedClips()
            for clip in made.indices where made[clip] == nil && stored.contains(keys[clip]) {
                // Made by a build in another folder of the library: taken from the store, not encoded again (a
                // fetch that fails leaves the clip to be encoded).
                try? await clipStore.fetch(keys[clip], into: shelf.clipFolder(keys[clip]))
                made[clip] = shelf.completedClip(keys[clip])
            }
        }
        let toMake = made.indices.filter { made[$0] == nil }
        news(TapeEvent(stage: .started, tape: name, clips: entries.count, toMake: toMake.count,
                       playlist: shelf.playlistPath(name)))
        for (clip, durations) in made.enumerated() {
            if let durations { progress.finished(clip, .reused(segmentDurations: durations)) }
        }
        try await makeClips(toMake, entries: entries, folders: keys.map(shelf.clipFolder), progress: progress)
        if let clipStore {
            // Every whole clip the store lacks goes there: those just made, and those an interrupted build made.
            for key in Set(keys).subtracting(stored) where shelf.completedClip(key) != nil {
                try await clipStore.publish(key, from: shelf.clipFolder(key))
            }
        }
        return try await finish(progress: progress, shelf: shelf)
    }

    private func key(_ entry: TapeEntry) -> String {
        let seconds = entry.kind == .still ? settings.stillSeconds : settings.maxClipSeconds
        return TapeClipKey(contentSHA1: entry.contentSHA1, kind: entry.kind,
                           trim: TapeClipTrim(maxSeconds: seconds, kenBurns: settings.kenBurns)).folderName
    }

    /// The tests' brake: `CAIRN_TEST_CLIP_DELAY_MS=N` makes every clip wait N ms before it is made, so a test that
    /// watches a build (the live page's player) sees it in progress on any machine. Unset, it does nothing.
    private static let clipDelayForTests: Duration? = {
        guard let text = ProcessInfo.processInfo.environment["CAIRN_TEST_CLIP_DELAY_MS"], let milliseconds = Int(text),
              milliseconds > 0 else { return nil }
        return .milliseconds(milliseconds)
    }()

    /// Makes `clips` (tape order); each reports its segments as they are written. Until the tape is playable the
    /// frontier clip is made alone, urgently, with every core (what a viewer waits for comes first); then
    /// `settings.lanes` at once, the cores shared between them. A cancelled build interrupts the clips in progress;
    /// their folders stay incomplete and are made again next time.
    private func makeClips(_ clips: [Int], entries: [TapeEntry], folders: [String], progress: TapeProgress) async throws {
        let maker = TapeClipMaker(settings: settings)
        let lanes = max(1, settings.lanes)
        // One lane: the encoder's threads on every core. Several: x264 chooses (splitting the cores between
        // lanes measured slower, as a lane's still decodes leave its share idle).
        let background = TapeClipRequest.Effort.background(threads: lanes == 1 ? System.coreCount : 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = clips.makeIterator()
            var running = 0
            func start(_ clip: Int, effort: TapeClipRequest.Effort) {
                running += 1
                group.addTask {
                    let interrupt = MediaInterrupt()
                    if let delay = Self.clipDelayForTests { try await Task.sleep(for: delay) }
                    do {
                        // A store library's original is read into the folder for as long as its clip takes.
                        let fetched = try await clipStore?.fetchMedia(entries[clip].mediaPath)
                        defer { if let fetched { unlink(fetched) } }
                        _ = try await withTaskCancellationHandler {
                            try await BlockingPool.run {
                                try maker.make(entries[clip], into: folders[clip], effort: effort,
                                               interrupt: interrupt) { duration in
                                    progress.segment(clip, duration)
                                }
                            }
                        } onCancel: {
                            interrupt.interrupt()
                        }
                        progress.finished(clip, .encoded)
                    } catch let error as MediaError where error.category == .interrupted {
                        throw CancellationError()
                    } catch {
                        progress.failed(clip, reason: "\(error)")
                    }
                }
            }
            func fill() {
                let playable = progress.isPlayable
                while running < (playable ? lanes : 1), let clip = next.next() {
                    start(clip, effort: playable ? background : .urgent)
                }
            }
            fill()
            while try await group.next() != nil {
                running -= 1
                fill()
            }
        }
    }

    /// Joins the clips into the single file (a remux: nothing is encoded again) and reports the build.
    private func finish(progress: TapeProgress, shelf: TapeShelf) async throws -> TapeBuildReport {
        let (summary, manifest) = progress.snapshot()
        var report = TapeBuildReport(
            name: name, clips: summary.clips, encoded: summary.encoded, reused: summary.reused,
            skipped: summary.skipped.map {
                TapeBuildReport.Skipped(path: manifest.clips[$0.clip].sourcePath, reason: $0.reason, cutShort: $0.cutShort)
            },
            seconds: summary.seconds, playlist: shelf.playlistPath(name))
        let pieces = manifest.clips.filter { !$0.segmentDurations.isEmpty }.map {
            TapeMovieWriter.Piece(folder: shelf.clipFolder($0.folderName), segments: $0.segmentDurations.count,
                                  seconds: $0.durationSeconds)
        }
        let moviePath = shelf.moviePath(name)
        do {
            try await BlockingPool.run { try TapeMovieWriter.join(pieces, into: moviePath) }
            report.movie = moviePath
        } catch {
            report.movieError = "\(error)"
        }
        progress.news(TapeEvent(stage: .finished, tape: report.name, clips: report.clips, playlist: report.playlist,
                                movie: report.movie, movieError: report.movieError, tapeSeconds: report.seconds,
                                encoded: report.encoded, reused: report.reused, skipped: report.skipped.count))
        return report
    }
}

/// The build's shared state: the core and the record, changed under one lock by whichever lane reports, the
/// playlist and the record written and the news told in the order the core decided them.
final class TapeProgress: Sendable {
    private struct State {
        var core: TapeBuildCore
        var manifest: TapeManifest
        /// Clips told ready so far (the core's count is already past any clip an input published along with it).
        var toldReady = 0
    }

    private let state: Locked<State>
    private let shelf: TapeShelf
    private let entries: [TapeEntry]
    let news: @Sendable (TapeEvent) -> Void

    init(core: TapeBuildCore, manifest: TapeManifest, shelf: TapeShelf, entries: [TapeEntry],
         news: @escaping @Sendable (TapeEvent) -> Void) throws {
        state = Locked(State(core: core, manifest: manifest))
        self.shelf = shelf
        self.entries = entries
        self.news = news
        try shelf.writePlaylist(core.playlistText, of: manifest.name)
        try shelf.write(manifest)
    }

    func segment(_ clip: Int, _ seconds: Double) { apply { $0.segmentWritten(clip: clip, durationSeconds: seconds) } }
    func finished(_ clip: Int, _ source: TapeClipSource) { apply { $0.clipFinished(clip: clip, how: source) } }
    func failed(_ clip: Int, reason: String) { apply { $0.clipFailed(clip: clip, reason: reason) } }

    var isPlayable: Bool { state.withLock { $0.core.isPlayable } }

    func snapshot() -> (TapeBuildSummary, TapeManifest) { state.withLock { ($0.core.summary, $0.manifest) } }

    private func apply(_ input: (inout TapeBuildCore) -> [TapeBuildEvent]) {
        state.withLock { state in
            let events = input(&state.core)
            guard !events.isEmpty else { return }
            for event in events { state.manifest.apply(event) }
            // A write that fails leaves the files one version behind; the next input writes them whole again.
            try? shelf.writePlaylist(state.core.playlistText, of: state.manifest.name)
            try? shelf.write(state.manifest)
            for event in events { tell(event, &state) }
        }
    }

    private func tell(_ event: TapeBuildEvent, _ state: inout State) {
        let core = state.core
        switch event {
        case .segmentPublished(let clip, let index, let duration, let tapeSeconds):
            news(TapeEvent(stage: .segment, clip: clip, segment: index, durationSeconds: duration, tapeSeconds: tapeSeconds))
        case .clipPublished(let clip, let how):
            state.toldReady += 1
            news(TapeEvent(stage: .clipReady, clips: core.clipCount, clip: clip, path: entries[clip].displayPath,
                           how: how.rawValue, clipsReady: state.toldReady))
        case .clipSkipped(let clip, let reason, let cutShort):
            news(TapeEvent(stage: .clipSkipped, clip: clip, path: entries[clip].displayPath, reason: reason,
                           cutShort: cutShort))
        case .playable(let ready, let seconds):
            news(TapeEvent(stage: .playable, clips: core.clipCount, tapeSeconds: seconds, clipsReady: ready))
        case .finished:
            break  // told with the report, once the single file is made
        }
    }
}
