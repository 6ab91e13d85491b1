import CairnCore
import CairnStatus
import CairnTape
import Foundation

/// Which of a library's assets a tape shows: by capture time, kind and album, or listed by path or SHA1; always in
/// capture-time order (unknown times last), a Live Photo once, as its motion.
public struct TapeSelection: Sendable, Equatable {
    public var since: Date?
    public var until: Date?
    public var kind: MediaKind?
    public var album: String?
    /// Paths (source paths the library has seen, or files whose bytes it holds) or SHA1s; empty: every asset the
    /// other filters keep.
    public var assets: [String]

    public init(since: Date? = nil, until: Date? = nil, kind: MediaKind? = nil, album: String? = nil, assets: [String] = []) {
        self.since = since
        self.until = until
        self.kind = kind
        self.album = album
        self.assets = assets
    }
}

/// One clip to make: what it shows, and the file it is made from.
struct TapeEntry: Sendable, Equatable {
    /// The content the clip shows (for a Live Photo, its movie's), which names the clip.
    let contentSHA1: String
    let kind: TapeClipKind
    /// The file decoded: the original, a Live Photo's movie, or a still's synthesized clip.
    let mediaPath: String
    /// Whether `mediaPath` is a picture (decoded once and held) rather than a video.
    let isPicture: Bool
    /// The asset as a person knows it (its first source path), for messages and `tape show`.
    let displayPath: String
    let captureTime: Date?
}

/// A selection that names an asset the library does not hold.
public struct TapeSelectionError: Error, CustomStringConvertible {
    public let description: String
}

extension TapeSelection {
    /// The clips, in tape order. A listed asset the library does not hold is an error naming it.
    func entries(browser: LibraryBrowser) async throws -> [TapeEntry] {
        var wanted: Set<String>?
        if !assets.isEmpty {
            var found = Set<String>()
            for query in assets {
                let matches = try await browser.find(query)
                guard !matches.isEmpty else {
                    throw TapeSelectionError(description: "\(query): the library holds no asset with this SHA1, path or content")
                }
                found.formUnion(matches.map(\.hex))
            }
            wanted = found
        }
        var entries: [TapeEntry] = []
        for listing in try await browser.list(since: since, until: until, kind: kind, album: album) {
            if let wanted, !wanted.contains(listing.sha1), !(listing.motion.map(wanted.contains) ?? false) { continue }
            if let entry = try await entry(listing, browser: browser) { entries.append(entry) }
        }
        return entries
    }

    private func entry(_ listing: AssetListing, browser: LibraryBrowser) async throws -> TapeEntry? {
        if listing.kind == MediaKind.video.rawValue {
            return TapeEntry(contentSHA1: listing.sha1, kind: .video, mediaPath: listing.original, isPicture: false,
                             displayPath: listing.firstSourcePath, captureTime: listing.captureDate)
        }
        // A Live Photo plays as its movie.
        if let motion = listing.motion, let checksum = Checksum(hex: motion), let movie = try await browser.details(checksum) {
            return TapeEntry(contentSHA1: motion, kind: .livePhotoMotion, mediaPath: movie.original, isPicture: false,
                             displayPath: listing.firstSourcePath, captureTime: listing.captureDate)
        }
        guard listing.kind == MediaKind.photo.rawValue else { return nil }
        // The import's synthesized clip already is the still as a video: decoding it beats decoding a RAW again.
        var details: AssetDetails?
        if let checksum = Checksum(hex: listing.sha1) { details = try await browser.details(checksum) }
        let synthesized = details?.derived.first { $0.role == "clip" }?.path
        return TapeEntry(contentSHA1: listing.sha1, kind: .still, mediaPath: synthesized ?? listing.original,
                         isPicture: synthesized == nil, displayPath: listing.firstSourcePath,
                         captureTime: listing.captureDate)
    }
}
