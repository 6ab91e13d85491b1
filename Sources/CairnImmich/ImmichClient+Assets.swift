import CairnCore
import Foundation
import ImmichAPI
import OpenAPIRuntime

/// What the server holds of one content, by its SHA1 (Immich's identity, per user).
public enum ImmichPresence: Sendable, Hashable {
    case absent
    case present(assetID: String)
    /// In Immich's trash: uploading it again would leave it there (Immich answers "duplicate"); it is restored.
    case trashed(assetID: String)

    public var assetID: String? {
        switch self {
        case .absent: return nil
        case .present(let id), .trashed(let id): return id
        }
    }
}

extension ImmichClient {
    /// Checksums per bulk-upload-check request. The server caps a JSON body at 10 MB (`server/src/app.common.ts`,
    /// `json({ limit: '10mb' })`) and checks the whole list in one query; an item with its hex checksum and a
    /// short id is under 70 bytes, so a page is about 1.4 MB.
    public static let presencePage = 20_000

    /// What the server holds of each checksum, asked in pages.
    public func presence(of checksums: [Checksum]) async throws(ImmichFailure) -> [Checksum: ImmichPresence] {
        var result: [Checksum: ImmichPresence] = [:]
        result.reserveCapacity(checksums.count)
        var start = 0
        while start < checksums.count {
            let page = Array(checksums[start..<min(start + Self.presencePage, checksums.count)])
            start += page.count
            // The id only matches an answer to its question: the page's index is shorter than the checksum.
            let items = page.indices.map { Components.Schemas.AssetBulkUploadCheckItem(checksum: page[$0].hex, id: String($0)) }
            let results = try await perform("check which files the server has", {
                try await api.checkBulkUpload(body: .json(.init(assets: items)))
            }) { try $0.ok.body.json.results }
            for item in results {
                guard let index = Int(item.id), page.indices.contains(index) else { continue }
                let checksum = page[index]
                switch (item.action, item.assetId) {
                case (.reject, let id?):
                    result[checksum] = item.isTrashed == true ? .trashed(assetID: id) : .present(assetID: id)
                default: result[checksum] = .absent
                }
            }
        }
        return result
    }

    /// Sends `ids` through `send` in one request and, when Immich refuses the whole batch for ids it will not let
    /// this key touch (400 "Not found or no asset.delete access": one id purged, in the Locked Folder or not this
    /// user's; `server/src/utils/access.ts` `requireAccess` allows all or nothing), sends each half again, down to
    /// the ids it refuses alone. Returns those; every other id was sent. A batch with k such ids costs about
    /// 2k·log2(n) requests, and none beyond the first when there are none.
    public func sendRefusingAlone(_ ids: [String], _ send: ([String]) async throws(ImmichFailure) -> Void)
        async throws(ImmichFailure) -> [String] {
        guard !ids.isEmpty else { return [] }
        do {
            try await send(ids)
            return []
        } catch where error.status == 400 {
            guard ids.count > 1 else { return ids }
            let half = ids.count / 2
            let first = try await sendRefusingAlone(Array(ids[..<half]), send)
            return try await first + sendRefusingAlone(Array(ids[half...]), send)
        }
    }

    /// Moves assets to Immich's trash (`force: false`: Immich keeps them restorable). cairn never purges.
    public func moveToTrash(_ assetIDs: [String]) async throws(ImmichFailure) {
        guard !assetIDs.isEmpty else { return }
        try await perform("move assets to the trash", {
            try await api.deleteAssets(body: .json(.init(force: false, ids: assetIDs)))
        }) { _ = try $0.noContent }
    }

    /// Brings assets back from Immich's trash; returns how many the server restored.
    @discardableResult
    public func restoreFromTrash(_ assetIDs: [String]) async throws(ImmichFailure) -> Int {
        guard !assetIDs.isEmpty else { return 0 }
        return try await perform("restore assets from the trash", {
            try await api.restoreAssets(body: .json(.init(ids: assetIDs)))
        }) { try $0.ok.body.json.count }
    }

    /// Changes what the upload could not carry: a Takeout JSON's date, place, star, caption and archived state, a
    /// Live Photo's link (the still names its movie) and the movie's visibility (hidden: it shows through its still).
    public func updateAsset(_ assetID: String, dateTimeOriginal: String? = nil, latitude: Double? = nil,
                            longitude: Double? = nil, livePhotoVideoID: String? = nil,
                            visibility: ImmichVisibility? = nil, isFavorite: Bool? = nil,
                            description: String? = nil) async throws(ImmichFailure) {
        let update = Components.Schemas.UpdateAssetDto(
            dateTimeOriginal: dateTimeOriginal, description: description, isFavorite: isFavorite, latitude: latitude,
            livePhotoVideoId: livePhotoVideoID, longitude: longitude,
            visibility: visibility.map { Components.Schemas.AssetVisibility(rawValue: $0.rawValue)! })
        try await perform("update an asset", { try await api.updateAsset(path: .init(id: assetID), body: .json(update)) }) {
            _ = try $0.ok
        }
    }
}

/// Where Immich shows an asset.
public enum ImmichVisibility: String, Sendable {
    case timeline, hidden, archive, locked
}
