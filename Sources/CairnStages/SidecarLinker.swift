import CairnArchive
import CairnCatalog
import CairnCore
import CairnHashing
import CairnLibrary
import CairnMedia
import CairnScanner
import CairnStore
import Foundation

/// Stores a scan's sidecars (`.xmp`, `.aae`, Takeout `.json`) byte-identical beside the originals and links each
/// to the asset it describes, on the run that brings the media or any later one; fills a photo's missing
/// capture time and position from them. A Google Takeout album's metadata file is kept the same way, and makes
/// its folder's media an album.
package struct SidecarLinker: Sendable {
    let library: Library
    /// Where the assets, probes, sidecars and albums are recorded.
    let catalog: any ItemCatalog & AssetLinkCatalog
    package let sourceID: Int64
    let now: Date
    /// Where the library's files live when not in its folder (`--store`): each sidecar is put there, not kept.
    let store: (any ObjectStore)?

    package init(library: Library, catalog: any ItemCatalog & AssetLinkCatalog, sourceID: Int64, now: Date,
                 store: (any ObjectStore)? = nil) {
        self.library = library
        self.catalog = catalog
        self.sourceID = sourceID
        self.now = now
        self.store = store
    }

    package struct Outcome {
        package var linked = 0
        /// Albums that are new, or gained members, on this run.
        package var albumsChanged: [String] = []
        package var failures: [ImportFailure] = []
    }

    /// Links the run's sidecars that are not linked as they are now, a folder at a time: a sidecar only names media
    /// beside it, so one folder's media are read (from the run tables) for that folder's sidecars, and nothing is
    /// held for the whole source. A rescan whose sidecars are all linked reads no folder but the album folders
    /// (whose metadata is read again, as a photo may have joined the album).
    package func link(sidecarsOf runFiles: any RunTables, sourceRoot: String, pageSize: Int = 512) async -> Outcome {
        var outcome = Outcome()
        var trashed: [String: TrashedTakeoutJSON] = [:]
        outcome.failures = await Self.eachSidecar(of: runFiles, pageSize: pageSize, page: { page in
            trashed = await knownTrashed(page)
        }) { sidecar, folder in
            // A JSON read before as its photo's trash: while that photo is not in the library, nothing to link, and
            // not read again.
            if let known = trashed[sidecar.relativePath], known.describes(sidecar),
               !(await holdsMedia(of: sidecar, title: known.title, in: folder)) {
                return
            }
            await link(sidecar, sourceRoot: sourceRoot, index: folder.index, checksums: folder.checksums, into: &outcome)
        }
        return outcome
    }

    /// What the run's Google Takeout JSONs say of their media before the lanes, by the media's source path: read
    /// so a run can hold back what sat in Google Photos' trash, and date what its file does not. Only the JSONs not
    /// linked yet are read; with `dates` false, only those that name the trash are parsed, and only trashed media
    /// are returned.
    package func takeoutFacts(of runFiles: any RunTables, sourceRoot: String, dates: Bool, pageSize: Int = 512) async
        -> [String: TakeoutMediaFacts] {
        var found: [String: TakeoutMediaFacts] = [:]
        var trashed: [String: TrashedTakeoutJSON] = [:]
        var read: [TrashedTakeoutJSON] = []
        _ = await Self.eachSidecar(of: runFiles, pageSize: pageSize, page: { page in
            trashed = await knownTrashed(page)
        }) { sidecar, folder in
            let name = FileSystem.baseName(of: sidecar.relativePath)
            guard SidecarMatcher.kind(of: name) == .takeout, !TakeoutAlbumMetadata.isCandidate(name: name) else { return }
            // A trashed photo's JSON is read once: its photo is held back, so the JSON is never linked and every run asks.
            if let known = trashed[sidecar.relativePath], known.describes(sidecar) {
                guard let media = SidecarMatcher.media(for: sidecar.relativePath, in: folder.index, title: known.title)
                else { return }
                found[media] = TakeoutMediaFacts(json: name, trashed: true, taken: known.taken)
                return
            }
            let path = sourceRoot + "/" + sidecar.relativePath
            guard let bytes = try? await BlockingWork.run({ try FileHasher().readWhole(path: path, expected: nil) }),
                  bytes.count <= SidecarMatcher.maxBytes, dates || Self.mentionsTrash(bytes),
                  let metadata = TakeoutMetadata(data: Data(bytes)), dates || metadata.facts?.trashed == true
            else { return }
            if metadata.facts?.trashed == true {
                read.append(TrashedTakeoutJSON(sourcePath: sidecar.relativePath, size: sidecar.fingerprint.size,
                                               modificationTimeNanoseconds: sidecar.fingerprint.modificationTimeNanoseconds,
                                               title: metadata.title, taken: metadata.photoTaken))
            }
            guard let media = SidecarMatcher.media(for: sidecar.relativePath, in: folder.index, title: metadata.title)
            else { return }
            found[media] = TakeoutMediaFacts(json: name, trashed: metadata.facts?.trashed == true, taken: metadata.photoTaken)
        }
        // Kept for the next runs; one that cannot be kept is read again then.
        try? await catalog.saveTrashedTakeoutJSONs(read)
        return found
    }

    /// What the catalog kept of the page's Takeout JSONs that said their photo was in the trash; none when it cannot
    /// be asked (they are read then).
    private func knownTrashed(_ page: [RunSidecar]) async -> [String: TrashedTakeoutJSON] {
        let jsons = page.filter { SidecarMatcher.kind(of: $0.record.relativePath) == .takeout }.map(\.record.relativePath)
        guard !jsons.isEmpty, let known = try? await catalog.trashedTakeoutJSONs(atSourcePaths: jsons) else { return [:] }
        return Dictionary(known.map { ($0.sourcePath, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Whether the media a Takeout JSON (of this title) names is in the library.
    private func holdsMedia(of sidecar: SourceFile, title: String?, in folder: FolderMedia) async -> Bool {
        guard let media = SidecarMatcher.media(for: sidecar.relativePath, in: folder.index, title: title),
              let checksum = folder.checksums[media] else { return false }
        return (try? await catalog.asset(checksum)) != nil
    }

    /// Whether a JSON's bytes hold `"trashed"`: most do not, and are not parsed.
    static func mentionsTrash(_ bytes: [UInt8]) -> Bool {
        let key = Array("\"trashed\"".utf8)
        guard bytes.count >= key.count else { return false }
        for start in 0...(bytes.count - key.count) where bytes[start] == key[0] {
            if bytes[start..<(start + key.count)].elementsEqual(key) { return true }
        }
        return false
    }

    /// A folder's media, as the run tables know them: their index for matching, and their checksums.
    struct FolderMedia {
        var name: String
        var index: SidecarMatcher.Index
        var checksums: [String: Checksum]
    }

    /// Calls `body` with each of the run's sidecars not linked as they are now, and its folder's media, read once
    /// per folder. Returns what could not be read (the walk stops at a page that cannot be).
    private static func eachSidecar(of runFiles: any RunTables, pageSize: Int, page pageStart: ([RunSidecar]) async -> Void,
                                    _ body: (SourceFile, FolderMedia) async -> Void) async -> [ImportFailure] {
        var failures: [ImportFailure] = []
        var folder: FolderMedia?
        var last: RunSidecar?
        while true {
            let page: [RunSidecar]
            do {
                page = try await runFiles.sidecarsToLink(after: last, limit: pageSize)
            } catch {
                failures.append(ImportFailure(relativePath: last?.record.relativePath ?? "", phase: .sidecar,
                                              reason: FailureReason(error), retryable: true))
                return failures
            }
            guard let end = page.last else { return failures }
            last = end
            await pageStart(page)
            for sidecar in page where SidecarMatcher.kind(of: sidecar.record.relativePath) != nil {
                if folder?.name != sidecar.folder {
                    do {
                        let checksums = try await runFiles.checksums(inFolder: sidecar.folder)
                        folder = FolderMedia(name: sidecar.folder, index: SidecarMatcher.Index(Array(checksums.keys)),
                                             checksums: checksums)
                    } catch {
                        folder = nil
                        failures.append(ImportFailure(relativePath: sidecar.record.relativePath, phase: .sidecar,
                                                      reason: FailureReason(error), retryable: true))
                        continue
                    }
                }
                guard let folder else { continue }
                await body(sidecar.record, folder)
            }
        }
    }

    private func link(_ sidecar: SourceFile, sourceRoot: String, index: SidecarMatcher.Index,
                      checksums: [String: Checksum], into outcome: inout Outcome) async {
        let path = sourceRoot + "/" + sidecar.relativePath
        guard let kind = SidecarMatcher.kind(of: sidecar.relativePath) else { return }
        let size = sidecar.fingerprint.size, modified = sidecar.fingerprint.modificationTimeNanoseconds
        // An album's metadata in an archive is read again only when its folder holds media the album lacks: the
        // rescan of an unchanged archive reads none of it.
        if kind == .takeout, TakeoutAlbumMetadata.isCandidate(name: FileSystem.baseName(of: sidecar.relativePath)),
           SourceArchive.container(of: sidecar.relativePath) != nil,
           await albumHolds(Set(checksums.values), metadataSourcePath: sidecar.relativePath) {
            return
        }
        // Read as the hashing reads (a sidecar is small): the same way for a file and an archive's entry.
        let bytes = try? await BlockingWork.run { try FileHasher().readWhole(path: path, expected: nil) }
        let data = bytes.map { Data($0) }
        let name = FileSystem.baseName(of: sidecar.relativePath)
        if kind == .takeout, TakeoutAlbumMetadata.isCandidate(name: name), let data,
           let album = TakeoutAlbumMetadata(data: data) {
            await linkAlbum(album, file: sidecar, path: path, checksums: checksums, into: &outcome)
            return
        }
        var takeout: TakeoutMetadata?
        if kind == .takeout {
            // A .json that is not Google's photo metadata is not a sidecar.
            guard let data, let parsed = TakeoutMetadata(data: data) else { return }
            takeout = parsed
        }
        guard let mediaPath = SidecarMatcher.media(for: sidecar.relativePath, in: index, title: takeout?.title),
              let asset = checksums[mediaPath], (try? await catalog.asset(asset)) != nil else { return }
        do {
            let (checksum, stored) = try await keep(sidecar, path: path)
            try await catalog.linkSidecar(SidecarRecord(checksum: checksum, asset: asset, kind: kind.rawValue, path: stored,
                                                  sourcePath: sidecar.relativePath, sourceSize: size,
                                                  sourceModificationTimeNanoseconds: modified, linkedAt: now))
            try await fillMetadata(asset, kind: kind, takeout: takeout, sidecar: data)
            outcome.linked += 1
        } catch {
            outcome.failures.append(ImportFailure(relativePath: sidecar.relativePath, phase: .sidecar,
                                                  reason: FailureReason(error), retryable: true))
        }
    }

    /// Whether the album this source's metadata file at `metadataSourcePath` made already has every one of `members`.
    private func albumHolds(_ members: Set<Checksum>, metadataSourcePath: String) async -> Bool {
        guard !members.isEmpty else { return false }
        for member in members {
            guard let albums = try? await catalog.albums(of: member),
                  albums.contains(where: { $0.sourceID == sourceID && $0.metadataSourcePath == metadataSourcePath })
            else { return false }
        }
        return true
    }

    /// Stores a sidecar's bytes in the library, content-addressed (on the blocking pool): its checksum and stored
    /// path.
    private func keep(_ sidecar: SourceFile, path: String) async throws -> (Checksum, String) {
        let layout = library.layout
        let stored: (checksum: Checksum, path: String) = try await BlockingWork.run {
            let hasher = try FileHasher()
            let checksum = try hasher.hash(path: path).checksum
            let ext = MediaClassifier.fileExtension(of: sidecar.relativePath).lowercased()
            let stored = layout.sidecarRelativePath(checksum, fileExtension: ext)
            _ = try OriginalsStore(layout: layout).place(sourcePath: path, checksum: checksum, relativePath: stored,
                                                         hasher: hasher)
            return (checksum, stored)
        }
        if let store {
            // Recorded only once the store holds it; the folder keeps no copy.
            try await StoreFiles.put(stored.path, from: layout, into: store)
            unlink(layout.absolute(stored.path))
        }
        return stored
    }

    /// Keeps an album's metadata file and makes the media beside it (those the library holds) its members.
    private func linkAlbum(_ album: TakeoutAlbumMetadata, file: SourceFile, path: String,
                           checksums: [String: Checksum], into outcome: inout Outcome) async {
        let folder = RelativePath.folder(of: file.relativePath)
        let name = album.name(folderName: FileSystem.baseName(of: FileSystem.parentDirectory(of: path)))
        do {
            let (checksum, stored) = try await keep(file, path: path)
            let change = try await catalog.saveAlbum(
                AlbumRecord(sourceID: sourceID, folder: folder, title: name, description: album.description,
                            date: album.date, metadataChecksum: checksum, metadataPath: stored,
                            metadataSourcePath: file.relativePath, updatedAt: now),
                members: Array(Set(checksums.values)))
            if change.created || change.membersAdded > 0 { outcome.albumsChanged.append(name) }
        } catch {
            outcome.failures.append(ImportFailure(relativePath: file.relativePath, phase: .sidecar,
                                                  reason: FailureReason(error), retryable: true))
        }
    }

    /// A photo with no capture time or position of its own takes the sidecar's, and says so.
    private func fillMetadata(_ asset: Checksum, kind: SidecarMatcher.Kind, takeout: TakeoutMetadata?, sidecar: Data?)
        async throws {
        guard let record = try await catalog.mediaProbe(asset),
              var probe = MediaProbe(storedJSON: record.probeJSON) else { return }
        var changed = false
        if probe.captureTime == nil || probe.captureDate == nil {
            var time: CaptureTime?
            if let instant = takeout?.photoTaken {
                time = CaptureTime(instant: instant, local: nil, offset: nil, source: "takeout-json")
            } else if kind == .xmp, let sidecar, let text = String(data: sidecar, encoding: .utf8) {
                time = XMPDates.captureTime(in: text)
            }
            if let time {
                probe.captureTime = time
                probe.captureDate = time.sortDate
                changed = true
            }
        }
        if probe.gps == nil, let position = takeout?.position {
            probe.gps = position
            probe.gpsSource = "takeout-json"
            changed = true
        }
        // Google's own record of the photo: the JSON's latest word, as it may change between exports.
        if let facts = takeout?.facts, probe.googlePhotos != facts {
            probe.googlePhotos = facts
            changed = true
        }
        guard changed else { return }
        let json = String(decoding: try JSONEncoder().encode(probe), as: UTF8.self)
        try await catalog.fillFromSidecar(asset, captureDate: probe.captureDate, latitude: probe.gps?.latitude,
                                          longitude: probe.gps?.longitude, probeJSON: json)
    }
}

/// What a run needs to know of a Takeout JSON before the lanes: its name, and its photo's trash and date.
package struct TakeoutMediaFacts: Sendable, Equatable {
    package var json: String
    package var trashed: Bool
    package var taken: Date?
}

/// What a Google Takeout `.json` says about its photo.
struct TakeoutMetadata {
    var title: String?
    var photoTaken: Date?
    var position: GPSCoordinate?
    /// Favourite, archived, caption, people, trashed, partner; nil when the JSON says none of them.
    var facts: GooglePhotosFacts?

    /// Nil when the file is not a JSON object with Takeout's fields.
    init?(data: Data) {
        guard data.count <= SidecarMatcher.maxBytes,
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        title = object["title"] as? String
        if let taken = object["photoTakenTime"] as? [String: Any],
           let seconds = (taken["timestamp"] as? String).flatMap(Double.init) ?? taken["timestamp"] as? Double {
            photoTaken = Date(timeIntervalSince1970: seconds)
        }
        // Takeout writes 0,0 when it has no position.
        for key in ["geoData", "geoDataExif"] where position == nil {
            if let geo = object[key] as? [String: Any], let latitude = geo["latitude"] as? Double,
               let longitude = geo["longitude"] as? Double, latitude != 0 || longitude != 0 {
                position = GPSCoordinate(latitude: latitude, longitude: longitude, altitude: geo["altitude"] as? Double)
            }
        }
        guard title != nil || photoTaken != nil else { return nil }
        // Takeout writes each flag only when true, an empty caption as "", and `fromPartnerSharing` as an empty
        // object whose presence is the flag.
        var facts = GooglePhotosFacts()
        if object["favorited"] as? Bool == true { facts.favorite = true }
        if object["archived"] as? Bool == true { facts.archived = true }
        if object["trashed"] as? Bool == true { facts.trashed = true }
        if let text = object["description"] as? String, !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            facts.description = text
        }
        let people = (object["people"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if !people.isEmpty { facts.people = people.reduce(into: []) { if !$0.contains($1) { $0.append($1) } } }
        if let origin = object["googlePhotosOrigin"] as? [String: Any], origin["fromPartnerSharing"] != nil {
            facts.fromPartner = true
        }
        self.facts = facts.isEmpty ? nil : facts
    }
}

/// Capture dates in an XMP packet: `exif:DateTimeOriginal`, else `photoshop:DateCreated` or `xmp:CreateDate`,
/// as attributes or elements.
enum XMPDates {
    static func captureTime(in xmp: String) -> CaptureTime? {
        for name in ["exif:DateTimeOriginal", "photoshop:DateCreated", "xmp:CreateDate"] {
            for pattern in [name + #"="([^"]+)""#, "<" + name + #">([^<]+)<"#] {
                guard let match = xmp.range(of: pattern, options: .regularExpression) else { continue }
                let value = xmp[match].dropFirst(name.count + 2).dropLast(pattern.hasPrefix("<") ? 1 : 1)
                if let time = CaptureTime.parse(String(value), source: "xmp") { return time }
            }
        }
        return nil
    }
}
