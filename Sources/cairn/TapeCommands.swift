import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnNarration
import CairnStages
import CairnTape
import CairnTapeBuild
import Foundation

/// `cairn tape`: films of a library's photos and videos, as HLS that plays while it grows.
struct TapeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tape",
        abstract: "Compose photos and videos into a film that starts playing within seconds.",
        discussion: """
            A tape is an HLS playlist (tapes/NAME/playlist.m3u8 in the library) of H.264 1080p30 and AAC clips in \
            fMP4 segments: videos trimmed, stills as short clips, Live Photos as their motion, in capture order. \
            It is playable once its first clips are made and grows as the rest are; tape.mp4 is written at the end. \
            Clips are kept by content, so a rebuild makes only what is new. In a library whose files are in a \
            store, originals are read from the store and clips kept there too, so a build in another folder of \
            the library takes them from there.
            """,
        subcommands: [TapeBuildCommand.self, TapeListCommand.self, TapeShowCommand.self, TapeRemoveCommand.self])
}

/// `cairn tape build NAME [ASSET...]`
struct TapeBuildCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build",
        abstract: "Build (or rebuild) a tape from the library's assets.",
        discussion: """
            Selects assets by capture time, kind and album, or as listed (paths or SHA1s), and orders them by \
            capture time. A clip that cannot be made is skipped with its reason and the tape goes on. Exit 0: \
            every clip is in; 3: some were skipped; 130: interrupted (the next build resumes, keeping finished clips). \
            --lanes is held to what --memory has room for (each lane a 1080p encoder and a still's decode).
            """)

    @Argument(help: "The tape's name (a folder under <library>/tapes).")
    var name: String

    @Argument(help: "Assets to show, by source path, file or SHA1 (default: every asset the filters keep).")
    var assets: [String] = []

    @OptionGroup var filter: AssetFilterOptions

    @Option(help: "Cut each video after this many seconds.")
    var maxClipSeconds: Double = 6

    @Option(help: "Show each still for this many seconds.")
    var stillSeconds: Double = 3

    @Flag(help: "Pan and zoom slowly over stills.")
    var kenBurns = false

    @Option(help: "Clips encoded at once once the tape plays; each more is faster but holds another 1080p encoder's frames.")
    var lanes: Int = 1

    @OptionGroup var memory: MemoryOption

    @OptionGroup var library: LibraryOption
    @OptionGroup var narration: NarrationOptions
    @OptionGroup var catalog: CatalogLocationOption

    func validate() throws {
        do { try TapeShelf.validate(name: name) } catch { throw ValidationError(error.description) }
        guard (0.5...60).contains(maxClipSeconds) else { throw ValidationError("--max-clip-seconds takes 0.5 to 60.") }
        guard (0.5...60).contains(stillSeconds) else { throw ValidationError("--still-seconds takes 0.5 to 60.") }
        guard (1...16).contains(lanes) else { throw ValidationError("--lanes takes 1 to 16.") }
        _ = try memory.budget()
    }

    func run() async throws {
        // A library whose files are in a store: its originals are read from there, its clips kept there too.
        try await StoreOption.withRecorded(libraryRoot: library.resolvedPath) { store in
            try await build(clipStore: store.map { TapeClipStore(store: $0, layout: LibraryLayout(root: library.resolvedPath)) })
        }
    }

    private func build(clipStore: TapeClipStore?) async throws {
        MemoryTuning.returnLargeBlocksToTheSystem()
        let selection = TapeSelection(since: filter.sinceDate, until: filter.untilDate, kind: filter.mediaKind,
                                      album: filter.album, assets: assets)
        let budget = try memory.budget()
        let settings = TapeBuildSettings.within(budget, TapeBuildSettings(
            maxClipSeconds: maxClipSeconds, stillSeconds: stillSeconds, kenBurns: kenBurns, lanes: lanes))
        if settings.lanes < lanes {
            Output.error("--lanes \(lanes): \(settings.lanes) fit in the memory budget (\(budget)); building with \(settings.lanes)")
        }
        let root = try library.existingRoot()
        let view = TapeView(mode: narration.mode)
        // The build is a run like an import: its events go to the run log (which `cairn serve`'s page follows) and,
        // with --json, to stdout.
        let output: any NarrationHandler = narration.mode == .json ? NarrationOutput.renderer(mode: .json)
                                                                   : DiscardingNarrationHandler()
        let told = RunNarration(layout: LibraryLayout(root: root), output: output)
        defer { told.close() }
        let narrator = told.narrator
        narrator.runStarted(command: "tape build")
        let name = name, library = library, catalog = catalog
        let build = Task {
            try await CatalogAccess.changingExisting(library, catalog: catalog, command: "tape build") { opened, catalog in
                try await TapeBuilder(layout: opened.layout, catalog: catalog, name: name, settings: settings,
                                      clipStore: clipStore)
                    .build(selection) { news in
                        view.show(news)
                        narrator.tape(news)
                    }
            }
        }
        let signals = SignalHandling.install(cancellation: PipelineCancellation()) { signal in
            Output.error("\(signal): stopping; finished clips are kept and the next build resumes")
            build.cancel()
        }
        defer { signals.uninstall() }
        do {
            let report = try await build.value
            narrator.runEnded(report.skipped.isEmpty ? .success : .someFailed,
                              message: report.skipped.isEmpty ? nil
                                  : report.skipped.count == 1 ? "1 clip left out" : "\(report.skipped.count) clips left out")
            throw ExitCode(report.skipped.isEmpty ? ExitStatus.success.rawValue : ExitStatus.someFilesFailed.rawValue)
        } catch let exit as ExitCode {
            throw exit
        } catch is CancellationError {
            view.end()
            narrator.runEnded(.interrupted, message: "interrupted; finished clips are kept")
            throw ExitCode(ExitStatus.interrupted.rawValue)
        } catch let locked as LibraryLockedError {
            Output.error(locked.description)
            narrator.runEnded(.failed, message: locked.description)
            throw ExitCode(locked.exitStatus.rawValue)
        } catch {
            view.end()
            Output.error("tape \(name): \(error)")
            narrator.runEnded(.failed, message: "tape \(name): \(error)")
            throw ExitCode(ExitStatus.failure.rawValue)
        }
    }
}

/// `cairn tape list`
struct TapeListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the library's tapes.")

    @OptionGroup var library: LibraryOption

    @Flag(help: "Print one JSON object per tape (its record, as tape.json holds it).")
    var json = false

    func run() throws {
        let shelf = TapeShelf(layout: LibraryLayout(root: library.resolvedPath))
        for name in shelf.names() {
            guard let manifest = try shelf.manifest(name) else { continue }
            if json {
                Output.line(String(decoding: try Timestamp.jsonEncoder().encode(manifest), as: UTF8.self))
            } else {
                let state = manifest.finished ? "finished" : manifest.playable ? "playable, unfinished" : "unfinished"
                Output.line("\(name)  \(manifest.clips.count) clips · \(TapeView.clock(manifest.durationSeconds)) · \(state)")
            }
        }
    }
}

/// `cairn tape show NAME`
struct TapeShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a tape: its clips, their state, skipped clips with reasons, and its files.")

    @Argument(help: "The tape's name.")
    var name: String

    @OptionGroup var library: LibraryOption

    @Flag(help: "Print the tape's record as JSON (as tape.json holds it).")
    var json = false

    func run() throws {
        let shelf = TapeShelf(layout: LibraryLayout(root: library.resolvedPath))
        guard let manifest = try shelf.manifest(name) else {
            throw Output.fail("\(name): no such tape in \(shelf.layout.tapesDirectory) (`cairn tape list` lists them)")
        }
        if json {
            Output.line(String(decoding: try Timestamp.jsonEncoder().encode(manifest), as: UTF8.self))
            return
        }
        let ready = manifest.clips.count { $0.state == .ready }
        let state = manifest.finished ? "finished" : manifest.playable ? "playable, unfinished" : "unfinished"
        Output.line("tape      \(name) · \(state) · \(ready) of \(manifest.clips.count) clips · \(TapeView.clock(manifest.durationSeconds))")
        Output.line("playlist  \(shelf.playlistPath(name))")
        if FileManager.default.fileExists(atPath: shelf.moviePath(name)) { Output.line("movie     \(shelf.moviePath(name))") }
        for (index, clip) in manifest.clips.enumerated() {
            let what = switch clip.state {
            case .pending: "pending"
            case .ready: "ready \(String(format: "%.1f", clip.durationSeconds)) s (\(clip.origin?.rawValue ?? "?"))"
            case .skipped(let reason): "skipped: \(reason)"
            case .cutShort(let reason): "cut short at \(String(format: "%.1f", clip.durationSeconds)) s: \(reason)"
            }
            Output.line(String(format: "%4d  ", index + 1) + "\(clip.kind.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \(clip.sourcePath)  \(what)")
        }
    }
}

/// `cairn tape remove NAME`
struct TapeRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a tape, and the clips no other tape shows. The library's assets stay.")

    @Argument(help: "The tape's name.")
    var name: String

    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    func run() async throws {
        try await StoreOption.withRecorded(libraryRoot: library.resolvedPath) { store in
            try await CatalogAccess.reportingFailures {
                try await CatalogAccess.changingExisting(library, catalog: catalog, command: "tape remove") { opened, _ in
                    let shelf = TapeShelf(layout: opened.layout)
                    let clips = try shelf.remove(name)
                    Output.line("removed tape \(name) and \(clips) clip folders no other tape shows")
                    if let store {
                        let stored = try await TapeClipStore(store: store, layout: opened.layout).prune(keeping: try shelf.shownClips())
                        Output.line("removed \(stored) of those clips from \(store.description)")
                    }
                }
            }
        }
    }
}
