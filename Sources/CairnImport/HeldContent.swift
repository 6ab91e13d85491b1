import CairnCatalog
import CairnCore
import CairnMedia
import CairnStages
import Foundation

/// Why a run left a file of its new content out on purpose.
package enum Hold: Sendable, Equatable {
    /// Its path matched this `--exclude` pattern.
    case excluded(pattern: String)
    /// Not of the `--kind` asked for.
    case otherKind(MediaKind)
    /// Its capture time is outside `--since`/`--until`, or unknown: the filter's words.
    case outsideDates(String)
    /// Its Google Takeout JSON (named) says it sat in Google Photos' trash.
    case trashed(json: String)

    /// What the summary counts it as.
    package var label: String {
        switch self {
        case .excluded: "excluded"
        case .otherKind(let kind): "not \(kind == .photo ? "photos" : "videos")"
        case .outsideDates: "outside --since/--until"
        case .trashed: "in Google Photos' trash"
        }
    }

    /// The reason a `--report` line gives.
    package var reason: String {
        switch self {
        case .excluded(let pattern): "excluded by --exclude \(pattern)"
        case .otherKind(let kind): "not a \(kind.rawValue) (--kind \(kind.rawValue))"
        case .outsideDates(let words): words
        case .trashed(let json): "in Google Photos' trash (\(json) says so; --include-trashed imports it)"
        }
    }
}

/// The run's `ImportFilter` applied to its new content as each page is planned: what the Takeout JSONs said (read
/// once, before the lanes) and, for a date filter, each file's capture time (a probe of the file, else its JSON's).
struct HeldContent: Sendable {
    let filter: ImportFilter
    let takeout: [String: TakeoutMediaFacts]
    let sourceRoot: String
    /// Where an archive entry is copied to be probed.
    let scratch: String
    let media: MediaEngine
    let work: WorkTracker?

    /// The holds of a page's files, in their order: a file's probe (for a date filter) on up to a core each.
    func holds(_ files: [RunFile]) async -> [Hold?] {
        await concurrentMap(files, width: filter.needsCaptureTime ? System.coreCount : 1) { await hold($0) }
    }

    func hold(_ file: RunFile) async -> Hold? {
        let path = file.record.relativePath
        if let pattern = filter.exclusion(of: path) { return .excluded(pattern: pattern) }
        let facts = takeout[path]
        if !filter.includeTrashed, let facts, facts.trashed { return .trashed(json: facts.json) }
        if let kind = filter.kind, file.record.kind != kind { return .otherKind(kind) }
        guard filter.needsCaptureTime else { return nil }
        let taken = await captureDate(of: file) ?? facts?.taken
        return filter.dateReason(taken: taken).map(Hold.outsideDates)
    }

    /// The file's capture time as the metadata lane will read it; nil when it has none or cannot be probed.
    private func captureDate(of file: RunFile) async -> Date? {
        guard let checksum = file.record.checksum else { return nil }
        let item = ImportItem(relativePath: file.record.relativePath, sourceRoot: sourceRoot, kind: file.record.kind,
                              byteCount: file.record.fingerprint.size, checksum: checksum)
        guard let readable = try? await ReadableSource.open(item, scratch: scratch, work: work) else { return nil }
        defer { readable.close() }
        let media = self.media
        return try? await BlockingWork.run(tracking: work) { try media.probe(path: readable.path).captureDate }
    }
}

extension ImportRun {
    /// What the run holds back, or nil when it holds nothing back. The Takeout JSONs are read only when the run
    /// has sidecars, and parsed whole only for a date filter.
    func heldContent(_ hashed: Hashed, context: Context) async -> HeldContent? {
        let filter = options.filter
        let readsTakeout = hashed.report.sidecarCount > 0 && (!filter.includeTrashed || filter.needsCaptureTime)
        var takeout: [String: TakeoutMediaFacts] = [:]
        if readsTakeout {
            takeout = await SidecarLinker(library: library, catalog: catalog, sourceID: context.sourceID, now: now())
                .takeoutFacts(of: hashed.files, sourceRoot: context.sourceRoot, dates: filter.needsCaptureTime)
        }
        var nothingAsked = filter
        nothingAsked.includeTrashed = true
        guard nothingAsked != ImportFilter() || !takeout.isEmpty else { return nil }
        return HeldContent(filter: filter, takeout: takeout, sourceRoot: context.sourceRoot,
                           scratch: library.layout.temporaryDirectory,
                           media: MediaEngine(configuration: options.pipeline.memory.map { .within($0) } ?? MediaConfiguration()),
                           work: work)
    }
}
