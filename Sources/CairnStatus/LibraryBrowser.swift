import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnMedia
import Foundation

/// One asset with everything the catalog knows about it, for `cairn asset`.
public struct AssetDetails: Codable, Sendable, Equatable {
    public struct DerivedFile: Codable, Sendable, Equatable {
        public var role: String
        public var path: String
        public var format: String
        public var width: Int
        public var height: Int
    }

    public var sha1: String
    public var kind: String
    public var bytes: Int64
    /// The original in the library, absolute.
    public var original: String
    /// Every source file known to hold these bytes (absolute), from each source's last scan.
    public var sourcePaths: [String]
    public var captureTime: CaptureTime?
    public var cameraMake: String?
    public var cameraModel: String?
    public var lens: String?
    public var gps: GPSCoordinate?
    /// As displayed (orientation applied).
    public var width: Int?
    public var height: Int?
    public var durationSeconds: Double?
    public var container: String?
    public var codec: String?
    public var colourProfile: String?
    public var derived: [DerivedFile]
    /// The import's state for this content: `ready`, `failed`, ... (absent for assets imported before items).
    public var state: String?
    public var reason: String?
    /// Why the asset has no thumbnail or preview, when it is kept without one.
    public var keptWithoutPreview: String?
    public struct Sidecar: Codable, Sendable, Equatable {
        /// `xmp`, `aae` or `takeout`.
        public var kind: String
        /// The stored copy in the library, absolute.
        public var path: String
        /// Where it was found, relative to its source.
        public var sourcePath: String
        public var sha1: String
    }

    public var sidecars: [Sidecar]
    /// The titles of the albums the asset is in.
    public var albums: [String]
    /// The tags runs gave it (`--tag`, `--session-tag`), by name.
    public var tags: [String]
    /// Where `gps` came from when not from the file itself (`takeout-json`).
    public var gpsSource: String?
    /// The other half of a Live Photo: its movie (for a still) or its still (for a movie), and why they pair.
    public var pairedWith: String?
    public var pairBasis: String?
    /// The stack it is in, primary (the one shown) first, and why those shots stack: its members in the library (not
    /// those in the trash).
    public var stack: [String]?
    public var stackBasis: String?
    /// The stack's primary when that is in the trash: `stack` is then absent, and each member is listed on its own
    /// (as `cairn ls` does) until the primary is restored.
    public var stackPrimaryTrashed: String?
    /// What Google Photos knew of it (favourite, archived, caption, people, ...), from its Takeout JSON.
    public var googlePhotos: GooglePhotosFacts?
    public var importedAt: Date
    public var runId: String?
}

/// One line of `cairn ls`.
public struct AssetListing: Codable, Sendable, Equatable {
    public var sha1: String
    public var kind: String
    /// The capture instant (or a floating wall time read as UTC), for ordering; absent when unknown.
    public var captureDate: Date?
    /// The wall clock as written and its offset, when known.
    public var captureLocal: String?
    public var captureOffset: String?
    public var width: Int?
    public var height: Int?
    public var firstSourcePath: String
    public var original: String
    /// A Live Photo's movie, listed with its still rather than on a line of its own.
    public var motion: String?
    /// A stack's members, primary first: the stack is listed on its primary's line alone.
    public var stack: [String]?
    /// What Google Photos knew of it, from its Takeout JSON.
    public var googlePhotos: GooglePhotosFacts?
}

/// One line of `cairn albums`.
public struct AlbumListing: Codable, Sendable, Equatable {
    public var title: String
    public var description: String?
    public var date: Date?
    /// Members the library holds.
    public var members: Int
    /// The album's folder, relative to its source.
    public var folder: String
    /// The album's metadata file as kept in the library (byte-identical), absolute.
    public var metadata: String
}

/// Read-only views of what a library holds, over its catalog (its SQLite file or its PostgreSQL database).
public struct LibraryBrowser: Sendable {
    public let layout: LibraryLayout
    public let catalog: any BrowsingCatalog

    public init(layout: LibraryLayout, catalog: any BrowsingCatalog) {
        self.layout = layout
        self.catalog = catalog
    }

    /// The assets `query` names: a SHA1 (40 hex digits), a source path the catalog knows (relative to its
    /// source or absolute), or any readable file, by its content.
    public func find(_ query: String) async throws -> [Checksum] {
        if query.count == 40, let checksum = Checksum(hex: query.lowercased()), try await catalog.asset(checksum) != nil {
            return [checksum]
        }
        let absolute = query.hasPrefix("/") ? query : FileManager.default.currentDirectoryPath + "/" + query
        for candidate in [query, absolute] {
            var found: [Checksum] = []
            for checksum in try await catalog.checksums(atSourcePath: candidate) where try await catalog.asset(checksum) != nil {
                found.append(checksum)
            }
            if !found.isEmpty { return found }
        }
        // Hashing refuses links along the path: resolve them first, as `cairn hash` does.
        let resolved = URL(fileURLWithPath: absolute).resolvingSymlinksInPath().path
        guard FileManager.default.fileExists(atPath: resolved) else { return [] }
        let digest = try? await BlockingPool.run { try FileHasher().hash(path: resolved) }
        if let digest, try await catalog.asset(digest.checksum) != nil { return [digest.checksum] }
        return []
    }

    public func details(_ checksum: Checksum) async throws -> AssetDetails? {
        guard let asset = try await catalog.asset(checksum) else { return nil }
        let probe = try await catalog.mediaProbe(checksum).flatMap { MediaProbe(storedJSON: $0.probeJSON) }
        let item = try await catalog.importItem(checksum)
        let pair = try await catalog.pair(of: checksum)
        let found = try await catalog.stack(of: checksum)
        var stack = found
        var stackPrimaryTrashed: String?
        if var shown = found {
            var kept: [Checksum] = []
            for member in shown.members where try await catalog.asset(member) != nil { kept.append(member) }
            if kept.first != shown.primary {
                stackPrimaryTrashed = shown.primary.hex
                stack = nil
            } else if kept.count < 2 {
                stack = nil
            } else {
                shown.members = kept
                stack = shown
            }
        }
        return AssetDetails(
            sha1: checksum.hex, kind: asset.kind.rawValue, bytes: asset.size, original: layout.absolute(asset.originalPath),
            sourcePaths: try await catalog.sourcePaths(of: checksum).map { $0.root + "/" + $0.relativePath },
            captureTime: probe?.captureTime, cameraMake: probe?.cameraMake, cameraModel: probe?.cameraModel,
            lens: probe?.lens, gps: probe?.gps, width: probe?.width, height: probe?.height,
            durationSeconds: probe?.durationSeconds, container: probe?.container,
            codec: probe?.streams.first { $0.type == "video" }?.codec, colourProfile: probe?.colourProfile,
            derived: try await catalog.derivedFiles(of: checksum).map {
                AssetDetails.DerivedFile(role: $0.role.rawValue, path: layout.absolute($0.path), format: $0.format,
                                         width: $0.width, height: $0.height)
            },
            state: item?.state.name.rawValue, reason: item?.state.failure?.reason.description, keptWithoutPreview: asset.noPreviewReason,
            sidecars: try await catalog.sidecars(of: checksum).map {
                AssetDetails.Sidecar(kind: $0.kind, path: layout.absolute($0.path), sourcePath: $0.sourcePath,
                                     sha1: $0.checksum.hex)
            },
            albums: try await catalog.albums(of: checksum).map(\.title),
            tags: try await catalog.tags(of: checksum),
            gpsSource: probe?.gpsSource,
            pairedWith: pair.map { $0.still == checksum ? $0.motion.hex : $0.still.hex }, pairBasis: pair?.basis,
            stack: stack.map { $0.members.map(\.hex) }, stackBasis: stack == nil && stackPrimaryTrashed == nil ? nil : found?.basis,
            stackPrimaryTrashed: stackPrimaryTrashed, googlePhotos: probe?.googlePhotos, importedAt: asset.importedAt, runId: asset.runID)
    }

    /// The library's assets by capture time; `album` (a title, any case) keeps that album's members alone,
    /// `favorite` Google Photos' favourites alone, `person` those Google Photos named that person in (any case),
    /// `tag` those a run tagged so (any case).
    public func list(since: Date? = nil, until: Date? = nil, kind: MediaKind? = nil, album: String? = nil,
                     favorite: Bool = false, person: String? = nil, tag: String? = nil) async throws -> [AssetListing] {
        var albums: [Int64]?
        if let album { albums = try await catalog.albums(titled: album).compactMap(\.id) }
        var tagged: Set<Checksum>?
        if let tag { tagged = try await catalog.assets(taggedWith: tag) }
        // A Live Photo is one line: the still's, naming its movie.
        var motionOf: [Checksum: Checksum] = [:]
        var motions = Set<Checksum>()
        for pair in try await catalog.allPairs() {
            motionOf[pair.still] = pair.motion
            motions.insert(pair.motion)
        }
        let rows = try await catalog.listedAssets(since: since, until: until, kind: kind, albums: albums)
        // A stack is one line too: its primary's, naming the others; a member whose primary is not listed (trashed,
        // or outside the filters) has a line of its own.
        let listed = Set(rows.map(\.asset.checksum))
        var stackOf: [Checksum: AssetStack] = [:]
        var stacked = Set<Checksum>()
        for stack in try await catalog.allStacks() where listed.contains(stack.primary) {
            stackOf[stack.primary] = stack
            stacked.formUnion(stack.members.dropFirst())
        }
        return rows.compactMap { row in
            if motions.contains(row.asset.checksum), kind != .video { return nil }
            if stacked.contains(row.asset.checksum) { return nil }
            let probe = row.probeJSON.flatMap(MediaProbe.init(storedJSON:))
            if let tagged, !tagged.contains(row.asset.checksum) { return nil }
            if favorite, probe?.googlePhotos?.favorite != true { return nil }
            if let person, probe?.googlePhotos?.names(person) != true { return nil }
            return AssetListing(
                sha1: row.asset.checksum.hex, kind: row.asset.kind.rawValue, captureDate: row.captureDate,
                captureLocal: probe?.captureTime?.local, captureOffset: probe?.captureTime?.offset,
                width: probe?.width, height: probe?.height, firstSourcePath: row.asset.firstSourcePath,
                original: layout.absolute(row.asset.originalPath), motion: motionOf[row.asset.checksum]?.hex,
                stack: stackOf[row.asset.checksum].map { $0.members.map(\.hex) }, googlePhotos: probe?.googlePhotos)
        }
    }

    /// Every album, with its members in the library.
    public func albums() async throws -> [AlbumListing] {
        try await catalog.albums().map {
            AlbumListing(title: $0.album.title, description: $0.album.description, date: $0.album.date,
                         members: $0.members, folder: $0.album.folder,
                         metadata: layout.absolute($0.album.metadataPath))
        }
    }
}
