import ArgumentParser
import CairnCore
import CairnLibrary
import CairnMedia
import CairnNarration
import CairnStatus
import Foundation

/// Runs `body` with a browser over the existing library and its catalog, read only; failures (no library yet, a
/// catalog that cannot be read) are said in one line and exit 1.
func browsing(_ library: LibraryOption, catalog: CatalogLocationOption,
              _ body: (LibraryBrowser) async throws -> Void) async throws {
    try await CatalogAccess.reportingFailures {
        try await CatalogAccess.readingExisting(library, catalog: catalog) { opened, catalog in
            try await body(LibraryBrowser(layout: opened.layout, catalog: catalog))
        }
    }
}

/// `cairn asset PATH|SHA1 [--json]`
struct AssetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asset",
        abstract: "Show one asset with everything the catalog knows about it.",
        discussion: """
            Name the asset by its SHA1, by a source path the library has seen (relative to its source or absolute), \
            or by any file with the same bytes. Prints the original's place in the library, every source path \
            holding it, when it was taken (with its zone, and where that came from), camera, lens, place, size \
            as displayed, duration, derived files and the import's state. Exit 1 when no asset matches.
            """)

    @Argument(help: "A SHA1, a source path, or a file whose bytes the library holds.")
    var query: String

    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    @Flag(help: "Print one JSON object per matching asset (fields as in the README), instead of text.")
    var json = false

    func validate() throws {
        guard !query.isEmpty else { throw ValidationError("Give a SHA1 or a path.") }
    }

    func run() async throws {
        try await browsing(library, catalog: catalog) { browser in
            var found: [AssetDetails] = []
            for checksum in try await browser.find(query) {
                if let details = try await browser.details(checksum) { found.append(details) }
            }
            guard !found.isEmpty else {
                throw Output.fail("\(query): no asset in \(browser.layout.root) has this SHA1, path or content")
            }
            let encoder = Timestamp.jsonEncoder()
            for details in found {
                if json {
                    Output.line(String(decoding: try encoder.encode(details), as: UTF8.self))
                } else {
                    Output.line(Self.text(details))
                }
            }
        }
    }

    static func text(_ asset: AssetDetails) -> String {
        var lines = ["sha1       \(asset.sha1)"]
        var shape = [asset.kind]
        if let width = asset.width, let height = asset.height { shape.append("\(width)x\(height)") }
        if let duration = asset.durationSeconds { shape.append(String(format: "%.2f s", duration)) }
        if let container = asset.container { shape.append([container, asset.codec].compactMap { $0 }.joined(separator: " ")) }
        shape.append(NarrationFormat.bytes(asset.bytes))
        lines.append("kind       " + shape.joined(separator: " · "))
        lines.append("original   \(asset.original)")
        for path in asset.sourcePaths { lines.append("source     \(path)") }
        if let time = asset.captureTime { lines.append("taken      " + Self.describe(time)) }
        let camera = [asset.cameraMake, asset.cameraModel].compactMap { $0 }.joined(separator: " ")
        if !camera.isEmpty { lines.append("camera     " + camera + (asset.lens.map { " · lens \($0)" } ?? "")) }
        if let gps = asset.gps {
            lines.append(String(format: "place      %.6f, %.6f", gps.latitude, gps.longitude)
                         + (gps.altitude.map { String(format: " · %.0f m", $0) } ?? "")
                         + (asset.gpsSource.map { " from \($0)" } ?? ""))
        }
        for sidecar in asset.sidecars { lines.append("sidecar    \(sidecar.kind) \(sidecar.sourcePath) -> \(sidecar.path)") }
        for album in asset.albums { lines.append("album      \(album)") }
        if !asset.tags.isEmpty { lines.append("tags       " + asset.tags.joined(separator: ", ")) }
        if let google = asset.googlePhotos {
            let flags = [google.favorite == true ? "favourite" : nil, google.archived == true ? "archived" : nil,
                         google.trashed == true ? "in its trash" : nil, google.fromPartner == true ? "shared by a partner" : nil]
                .compactMap { $0 }
            if !flags.isEmpty { lines.append("google     " + flags.joined(separator: " · ")) }
            if let caption = google.description { lines.append("caption    " + caption) }
            if let people = google.people { lines.append("people     " + people.joined(separator: ", ")) }
        }
        if let profile = asset.colourProfile { lines.append("colour     \(profile) (converted to sRGB in the derived files)") }
        for file in asset.derived { lines.append("derived    \(file.role) \(file.format) \(file.width)x\(file.height) \(file.path)") }
        if let partner = asset.pairedWith {
            lines.append("live photo \(asset.kind == "video" ? "motion of still" : "still with motion") \(partner) (by \(asset.pairBasis ?? "?"))")
        }
        if let stack = asset.stack, let primary = stack.first {
            let role = primary == asset.sha1 ? "shown, with \(stack.count - 1) more" : "one of \(stack.count), shown: \(primary)"
            lines.append("stack      \(role) (by \(asset.stackBasis ?? "?"))")
            for member in stack.dropFirst() where member != asset.sha1 { lines.append("  member   \(member)") }
        } else if let primary = asset.stackPrimaryTrashed {
            lines.append("stack      on its own while the one shown, \(primary), is in the trash (by \(asset.stackBasis ?? "?"))")
        }
        if let kept = asset.keptWithoutPreview { lines.append("preview    none: kept without preview (\(kept))") }
        if let state = asset.state { lines.append("state      " + state + (asset.reason.map { ": \($0)" } ?? "")) }
        lines.append("imported   \(Timestamp.toTheSecond(asset.importedAt))" + (asset.runId.map { " (run \($0))" } ?? ""))
        return lines.joined(separator: "\n")
    }

    /// "2023-07-14 10:44:00 +02:00 (2023-07-14T08:44:00Z) from exif", or the wall time marked floating.
    static func describe(_ time: CaptureTime) -> String {
        let wall = time.local.map { $0.replacingOccurrences(of: "T", with: " ") }
        let instant = time.instant.map(Timestamp.toTheSecond)
        switch (wall, time.offset, instant) {
        case let (wall?, offset?, instant?): return "\(wall) \(offset) (\(instant)) from \(time.source)"
        case let (wall?, nil, nil): return "\(wall) local time, zone unknown (floating) from \(time.source)"
        case let (nil, _, instant?): return "\(instant) from \(time.source)"
        case let (wall?, _, _): return "\(wall) from \(time.source)"
        default: return "unknown"
        }
    }
}

/// `cairn ls [--since DATE] [--until DATE] [--kind photo|video] [--album TITLE] [--favorite] [--person NAME] [--tag NAME] [--json]`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List the library's assets by the time they were taken.",
        discussion: """
            One line per asset: capture time (the wall clock with its offset when known), kind, size as displayed, \
            the first source path and the start of its SHA1. Assets with no capture time come last.
            """)

    @OptionGroup var filter: AssetFilterOptions

    @Flag(help: "Only the assets Google Photos had starred (from their Takeout JSON).")
    var favorite = false

    @Option(help: "Only the assets Google Photos named this person in (any case; from their Takeout JSON).")
    var person: String?

    @Option(help: "Only the assets a run tagged so (import or sync --tag, --session-tag; any case).")
    var tag: String?

    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    @Flag(help: "Print one JSON object per asset (fields as in the README), instead of text.")
    var json = false

    func validate() throws {
        if let person, person.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--person needs a name.") }
    }

    func run() async throws {
        try await browsing(library, catalog: catalog) { browser in
            if let album = filter.album, try await browser.catalog.albums(titled: album).isEmpty {
                throw Output.fail("--album \(album): no album with this title in \(browser.layout.root) (`cairn albums` lists them)")
            }
            try show(try await browser.list(since: filter.sinceDate, until: filter.untilDate, kind: filter.mediaKind,
                                            album: filter.album, favorite: favorite,
                                            person: person?.trimmingCharacters(in: .whitespaces), tag: tag))
        }
    }

    private func show(_ listing: [AssetListing]) throws {
        let encoder = Timestamp.jsonEncoder()
        for asset in listing {
            if json {
                Output.line(String(decoding: try encoder.encode(asset), as: UTF8.self))
                continue
            }
            let taken = asset.captureLocal.map { $0.prefix(19) + (asset.captureOffset ?? "") }
                ?? asset.captureDate.map(Timestamp.toTheSecond) ?? "-"
            let size = asset.width.map { "\($0)x\(asset.height ?? 0)" } ?? "-"
            Output.line("\(taken.padding(toLength: 25, withPad: " ", startingAt: 0)) \(asset.kind.padding(toLength: 5, withPad: " ", startingAt: 0)) "
                        + "\(size.padding(toLength: 11, withPad: " ", startingAt: 0)) \(asset.sha1.prefix(12))  \(asset.firstSourcePath)"
                        + (asset.motion.map { "  + live \($0.prefix(12))" } ?? "")
                        + (asset.stack.map { "  [stack of \($0.count)]" } ?? ""))
        }
    }

}

/// Which assets a browsing command takes: by capture time, kind and album (`ls`, `tape build`).
struct AssetFilterOptions: ParsableArguments {
    @Option(help: "Only assets taken at or after this date (YYYY-MM-DD, UTC, or an ISO 8601 time).")
    var since: String?

    @Option(help: "Only assets taken before this date (YYYY-MM-DD, UTC, or an ISO 8601 time).")
    var until: String?

    @Option(help: "Only photos or only videos (photo or video).")
    var kind: String?

    @Option(help: "Only the members of the album with this title (any case; `cairn albums` lists them).")
    var album: String?

    func validate() throws {
        if let since, Self.date(since) == nil { throw ValidationError("--since \(since): not a date (YYYY-MM-DD or ISO 8601).") }
        if let until, Self.date(until) == nil { throw ValidationError("--until \(until): not a date (YYYY-MM-DD or ISO 8601).") }
        if let kind, kind != "photo", kind != "video" { throw ValidationError("--kind must be photo or video, not \(kind).") }
    }

    var sinceDate: Date? { since.flatMap(Self.date) }
    var untilDate: Date? { until.flatMap(Self.date) }
    var mediaKind: MediaKind? { kind.flatMap(MediaKind.init(rawValue:)) }

    /// "2024-05-01" (midnight UTC) or a full ISO 8601 time.
    static func date(_ text: String) -> Date? {
        Timestamp.parse(text.count == 10 ? text + "T00:00:00Z" : text)
    }
}
