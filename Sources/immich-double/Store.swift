import CairnCore
import Foundation
import ImmichAPI

/// Everything the double remembers, in memory (a restart starts empty; the uploaded files stay on disk). One actor,
/// so a checksum's "is it there yet, else create it" is atomic and two racing uploads of one file create it once.
actor Store {
    // Not private: Stacks.swift extends the store.
    var assets: [String: Asset] = [:]
    var assetOrder: [String] = []
    var stacks: [String: AssetStack] = [:]
    /// owner id → hex checksum → asset id: Immich's checksums are unique per owner, trashed assets included.
    private var byChecksum: [String: [String: String]] = [:]
    private var tags: [String: Tag] = [:]
    private var tagByValue: [String: [String: String]] = [:]
    private var albums: [String: Album] = [:]
    private var albumOrder: [String] = []
    private(set) var creations: [String: Int] = [:]
    private(set) var forceDeletes = 0
    private(set) var requests = 0
    let files: FileStore

    init(files: FileStore) { self.files = files }

    func countRequest() { requests += 1 }

    // MARK: Assets

    func existing(owner: String, digest: [UInt8]) -> Asset? {
        byChecksum[owner]?[digest.lowercaseHex].flatMap { assets[$0] }
    }

    func asset(_ id: String, owner: String) -> Asset? {
        guard let asset = assets[id], asset.ownerId == owner else { return nil }
        return asset
    }

    /// The all-or-nothing access check. Real server: `server/src/utils/access.ts` `requireAccess` (unless every id
    /// is allowed, `400 Not found or no <permission> access` and nothing changes) over
    /// `server/src/repositories/access.repository.ts` `AssetAccess.checkOwnerAccess`: the caller's own assets,
    /// trashed ones included, and never a Locked Folder one to an API key (no session with an unlocked PIN).
    func requireAccess(_ ids: [String], owner: String, permission: String) throws {
        for id in ids {
            guard let asset = asset(id, owner: owner), asset.visibility != .locked else {
                throw ImmichError.noAccess(permission: permission)
            }
        }
    }

    /// What a person does in Immich's web app: empties the trash of these assets, or deletes them for good.
    func purge(_ ids: [String]) {
        for id in ids {
            guard let asset = assets[id] else { continue }
            releaseStack(of: id)
            assets[id] = nil
            assetOrder.removeAll { $0 == id }
            byChecksum[asset.ownerId]?[asset.checksumHex] = nil
            for albumId in asset.albumIds { albums[albumId]?.assetIds.removeAll { $0 == id } }
            try? FileManager.default.removeItem(atPath: asset.path)
        }
    }

    /// Assets another client uploaded long ago, one per checksum (no file kept): a large library without its uploads.
    /// Returns their ids, in the checksums' order.
    func seed(_ checksums: [[UInt8]], owner: String, now: Date) -> [String] {
        checksums.enumerated().map { index, digest in
            if let found = existing(owner: owner, digest: digest) { return found.id }
            let id = UUID().uuidString.lowercased()
            let asset = Asset(
                id: id, ownerId: owner, checksum: digest, originalFileName: "SEED_\(index).JPG", fileCreatedAt: now,
                fileModifiedAt: now, duration: nil, visibility: .timeline, livePhotoVideoId: nil, sidecarBytes: 0,
                isFavorite: false, bytes: 0, type: .image, createdAt: now, updatedAt: now, path: "")
            assets[id] = asset
            assetOrder.append(id)
            byChecksum[owner, default: [:]][asset.checksumHex] = id
            return id
        }
    }

    /// What a person does in Immich's web app: moves these assets to the Locked Folder.
    func lock(_ ids: [String]) {
        for id in ids where assets[id] != nil { assets[id]?.visibility = .locked }
    }

    enum Outcome: Sendable { case created(Asset), duplicate(Asset) }

    /// Keeps `candidate` (moving its staged file into place) unless its owner already has those bytes.
    func createOrDuplicate(_ candidate: Asset, staged: URL) throws -> Outcome {
        if let found = existing(owner: candidate.ownerId, digest: candidate.checksum) {
            try? FileManager.default.removeItem(at: staged)
            return .duplicate(found)
        }
        try files.place(staged, at: candidate.path)
        assets[candidate.id] = candidate
        assetOrder.append(candidate.id)
        byChecksum[candidate.ownerId, default: [:]][candidate.checksumHex] = candidate.id
        creations[candidate.checksumHex, default: 0] += 1
        // Immich hides the motion part of a live photo once a still links to it.
        if let video = candidate.livePhotoVideoId, assets[video]?.visibility == .timeline {
            assets[video]?.visibility = .hidden
        }
        return .created(candidate)
    }

    /// Immich's check on a live photo link: the video must exist, be a video and belong to the same user.
    func livePhotoProblem(_ videoId: String, owner: String) -> String? {
        guard let video = assets[videoId] else { return "Live photo video not found" }
        guard video.ownerId == owner else { return "Live photo video does not belong to the user" }
        guard video.type == .video else { return "Live photo video must be a video" }
        return nil
    }

    /// Real server: `server/src/services/asset.service.ts` `update`: `description`, `dateTimeOriginal`, `latitude`,
    /// `longitude` go to the asset's EXIF row (`updateExif`), `isFavorite`, `visibility` and `livePhotoVideoId` to
    /// the asset itself; a field left out is left as it is.
    func update(_ id: String, owner: String, with dto: Components.Schemas.UpdateAssetDto, now: Date) throws -> Asset {
        guard var asset = asset(id, owner: owner) else { throw ImmichError.noAccess }
        if let text = dto.dateTimeOriginal {
            guard let date = DateText.parse(text) else { throw ImmichError.validation(["dateTimeOriginal must be a date"]) }
            asset.dateTimeOriginal = date
            asset.timeZone = Self.fixedZone(of: text)
            asset.fileCreatedAt = date
        }
        if let latitude = dto.latitude { asset.latitude = latitude }
        if let longitude = dto.longitude { asset.longitude = longitude }
        if let description = dto.description { asset.description = description }
        if let visibility = dto.visibility { asset.visibility = visibility }
        if let favorite = dto.isFavorite { asset.isFavorite = favorite }
        if let video = dto.livePhotoVideoId {
            if let problem = livePhotoProblem(video, owner: owner) { throw ImmichError.badRequest(problem) }
            asset.livePhotoVideoId = video
            if assets[video]?.visibility == .timeline { assets[video]?.visibility = .hidden }
        }
        asset.updatedAt = now
        assets[id] = asset
        return asset
    }

    /// The time zone Immich keeps for a `dateTimeOriginal`: its offset as Luxon names a fixed zone ("UTC",
    /// "UTC+2", "UTC-5:30"). Real server: `server/src/utils/date.ts` `extractTimeZone`, used by
    /// `asset.service.ts` `updateExif`.
    static func fixedZone(of text: String) -> String? {
        if text.hasSuffix("Z") { return "UTC" }
        guard text.count >= 6 else { return nil }
        let tail = text.suffix(6)
        guard let sign = tail.first, sign == "+" || sign == "-", tail.dropFirst(3).first == ":",
              let hours = Int(tail.dropFirst().prefix(2)), let minutes = Int(tail.suffix(2)) else { return nil }
        if hours == 0 && minutes == 0 { return "UTC" }
        return "UTC\(sign)\(hours)" + (minutes == 0 ? "" : ":" + (minutes < 10 ? "0" : "") + String(minutes))
    }

    /// Trashes (force false) or deletes for good (force true) the caller's assets `ids`, once `requireAccess`
    /// allowed every one of them (`asset.service.ts` `deleteAll`).
    func delete(_ ids: [String], owner: String, force: Bool, now: Date) throws {
        try requireAccess(ids, owner: owner, permission: "asset.delete")
        if force { forceDeletes += 1 }
        for id in ids {
            guard var asset = asset(id, owner: owner) else { continue }
            if force {
                purge([id])
            } else if !asset.isTrashed {
                asset.isTrashed = true
                asset.deletedAt = now
                asset.updatedAt = now
                assets[id] = asset
            }
        }
    }

    /// Restores the caller's trashed assets among `ids` once `requireAccess` (permission `asset.delete`) allowed
    /// every one; answers `ids.count` whatever was in the trash (`trash.service.ts` `restoreAssets`).
    func restore(_ ids: [String], owner: String, now: Date) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        try requireAccess(ids, owner: owner, permission: "asset.delete")
        for id in ids {
            guard var asset = asset(id, owner: owner), asset.isTrashed else { continue }
            asset.isTrashed = false
            asset.deletedAt = nil
            asset.updatedAt = now
            assets[id] = asset
        }
        return ids.count
    }

    func ownedAssets(_ owner: String) -> [Asset] {
        assetOrder.compactMap { assets[$0] }.filter { $0.ownerId == owner }
    }

    func allAssets() -> [Asset] { assetOrder.compactMap { assets[$0] } }

    // MARK: Tags

    /// Creates each path's missing tags, parents first, as Immich's upsert does; returns the leaves asked for.
    func upsertTags(_ paths: [String], owner: String, now: Date) -> [Tag] {
        var leaves: [Tag] = []
        for path in paths {
            let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
            guard !components.isEmpty else { continue }
            var parentId: String?
            var leaf: Tag?
            for depth in 1...components.count {
                let value = components.prefix(depth).joined(separator: "/")
                if let id = tagByValue[owner]?[value], let existing = tags[id] {
                    leaf = existing
                } else {
                    let tag = Tag(id: UUID().uuidString.lowercased(), ownerId: owner, value: value, parentId: parentId,
                                  createdAt: now, updatedAt: now)
                    tags[tag.id] = tag
                    tagByValue[owner, default: [:]][value] = tag.id
                    leaf = tag
                }
                parentId = leaf?.id
            }
            if let leaf { leaves.append(leaf) }
        }
        return leaves
    }

    /// Adds every (tag, asset) pair the caller owns; counts the pairs that were new, as Immich does.
    /// Real server: `server/src/services/tag.service.ts` `bulkTagAssets` keeps only the ids `checkAccess` allows
    /// (the caller's tags; the caller's assets, never a Locked Folder one to an API key) and drops the rest
    /// silently; `count` is the links it made.
    func tagAssets(tagIds: [String], assetIds: [String], owner: String, now: Date) -> Int {
        var count = 0
        for tagId in tagIds where tags[tagId]?.ownerId == owner {
            for assetId in assetIds {
                guard var asset = asset(assetId, owner: owner), asset.visibility != .locked,
                      !asset.tagIds.contains(tagId) else { continue }
                asset.tagIds.append(tagId)
                asset.updatedAt = now
                assets[assetId] = asset
                count += 1
            }
        }
        return count
    }

    func tags(_ ids: [String]) -> [Tag] { ids.compactMap { tags[$0] } }

    // MARK: Albums

    func createAlbum(name: String, description: String, assetIds: [String], owner: String, now: Date) -> Album {
        let album = Album(id: UUID().uuidString.lowercased(), ownerId: owner, name: name, description: description,
                          createdAt: now, updatedAt: now)
        albums[album.id] = album
        albumOrder.append(album.id)
        _ = add(assetIds, to: album.id, owner: owner, now: now)
        return albums[album.id] ?? album
    }

    /// Adds the caller's assets to one album it owns or edits; true if any was not in it yet.
    func add(_ assetIds: [String], to albumId: String, owner: String, now: Date) -> Bool {
        guard var album = albums[albumId], [.owner, .editor].contains(album.role(of: owner)) else { return false }
        var added = false
        for assetId in assetIds where !album.assetIds.contains(assetId) {
            guard asset(assetId, owner: owner) != nil else { continue }
            album.assetIds.append(assetId)
            assets[assetId]?.albumIds.append(albumId)
            added = true
        }
        if added { album.updatedAt = now }
        albums[albumId] = album
        return added
    }

    func album(_ id: String) -> Album? { albums[id] }

    /// The albums `user` owns or that are shared with them, newest first (`album.repository.ts` `getAll`:
    /// `album_user` joined on the user, ordered by `createdAt desc`).
    func albums(of user: String) -> [Album] {
        albumOrder.reversed().compactMap { albums[$0] }.filter { $0.role(of: user) != nil }
    }

    /// A person sharing their album with another user, as Immich's web app does.
    func share(_ albumId: String, with user: String, as role: Components.Schemas.AlbumUserRole) {
        albums[albumId]?.sharedWith[user] = role
    }

    /// The albums' assets, for their date range and thumbnail.
    func assets(_ ids: [String]) -> [Asset] { ids.compactMap { assets[$0] } }

    // MARK: Test view

    func snapshot(users: Users) -> DoubleState {
        DoubleState(
            assets: allAssets().map { asset in
                DoubleState.AssetState(
                    id: asset.id, owner: users.user(id: asset.ownerId)?.name ?? asset.ownerId, checksum: asset.checksumHex,
                    originalFileName: asset.originalFileName, type: asset.type.rawValue, visibility: asset.visibility.rawValue,
                    livePhotoVideoId: asset.livePhotoVideoId, isTrashed: asset.isTrashed, sidecarBytes: asset.sidecarBytes,
                    bytes: asset.bytes, fileCreatedAt: DateText.format(asset.fileCreatedAt),
                    dateTimeOriginal: asset.dateTimeOriginal.map(DateText.format), timeZone: asset.timeZone,
                    latitude: asset.latitude,
                    longitude: asset.longitude, duration: asset.duration, isFavorite: asset.isFavorite,
                    description: asset.description ?? "",
                    tags: asset.tagIds.compactMap { tags[$0]?.value }, albums: asset.albumIds.compactMap { albums[$0]?.name },
                    stackId: asset.stackId, stackPrimaryAssetId: asset.stackId.flatMap { stacks[$0]?.primaryAssetId })
            },
            creations: creations, forceDeletes: forceDeletes, requests: requests)
    }
}

/// Files on disk: uploads stream into DIR/staging and move to DIR/files/<owner>/<id> once kept.
struct FileStore: Sendable {
    let root: URL

    init(root: URL) throws {
        self.root = root
        for folder in ["files", "staging"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
    }

    func stagingURL() -> URL { root.appendingPathComponent("staging").appendingPathComponent(UUID().uuidString) }

    func path(owner: String, id: String) -> String {
        root.appendingPathComponent("files").appendingPathComponent(owner).appendingPathComponent(id).path
    }

    func place(_ staged: URL, at path: String) throws {
        let target = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: staged, to: target)
    }
}

/// Dates as Immich's spec wants them (ISO 8601, UTC, fractional seconds optional on input).
enum DateText {
    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let date = try? Date(trimmed, strategy: .iso8601) { return date }
        return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(trimmed)
    }

    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
