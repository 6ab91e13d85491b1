import CairnCore
import Foundation
import ImmichAPI

/// A user the double knows by API key. Its id is derived from the name so that restarts and separate doubles agree.
struct User: Sendable, Hashable {
    let key: String
    let name: String
    let id: String
    /// The API key's permissions (`all`, or Immich's permission names such as `asset.upload`).
    var permissions: [String] = ["all"]
    var email: String { "\(name)@example.com" }

    init(key: String, name: String) {
        self.key = key
        self.name = name
        id = Self.stableUUID("immich-double user \(name)")
    }

    /// Real server: `server/src/utils/access.ts` `isGranted`: `all` grants everything, else every requested one.
    func isGranted(_ permission: String) -> Bool { permissions.contains("all") || permissions.contains(permission) }

    /// A version-4-shaped UUID from a name: Immich's spec only accepts v4 ids (its pattern checks the version nibble).
    static func stableUUID(_ seed: String) -> String {
        let sha = SHA1()
        sha.update(Array(seed.utf8))
        var bytes = Array(sha.finish().prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.lowercaseHex
        let parts = [hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4), hex.dropFirst(16).prefix(4),
                     hex.dropFirst(20)]
        return parts.joined(separator: "-")
    }
}

/// The users, fixed at start: read by every request without a hop through the store's actor.
struct Users: Sendable {
    let all: [User]
    private let byKey: [String: User]
    /// Keys revoked by a test (`POST /_double/keys/revoke`), as a person revokes one in Immich mid-run; shared by
    /// every copy of this value.
    private let revoked = Revocations()

    init(_ users: [User]) {
        all = users
        byKey = Dictionary(users.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
    }

    func user(forKey key: String) -> User? { revoked.contains(key) ? nil : byKey[key] }

    func revoke(_ key: String, _ isRevoked: Bool) { revoked.set(key, isRevoked) }
    func user(id: String) -> User? { all.first { $0.id == id } }
    func user(named name: String) -> User? { all.first { $0.name == name } }
}

/// One uploaded asset, with what Immich keeps that the tests look at.
struct Asset: Sendable {
    let id: String
    let ownerId: String
    let checksum: [UInt8]
    var originalFileName: String
    var fileCreatedAt: Date
    var fileModifiedAt: Date
    var duration: Int?
    var visibility: Components.Schemas.AssetVisibility
    var livePhotoVideoId: String?
    var sidecarBytes: Int
    var isFavorite: Bool
    var isTrashed = false
    var deletedAt: Date?
    let bytes: Int
    let type: Components.Schemas.AssetTypeEnum
    var tagIds: [String] = []
    var albumIds: [String] = []
    /// The stack it is in (`asset.stackId`; Stacks.swift).
    var stackId: String?
    let createdAt: Date
    var updatedAt: Date
    let path: String
    // Set through updateAsset; Immich keeps these in the asset's EXIF row.
    var dateTimeOriginal: Date?
    /// The time zone Immich keeps with `dateTimeOriginal` (from its offset).
    var timeZone: String?
    var latitude: Double?
    var longitude: Double?
    var description: String?

    var checksumHex: String { checksum.lowercaseHex }
    var checksumBase64: String { Data(checksum).base64EncodedString() }

    /// Immich decides the type from the file name's extension (`mime-types.ts` `assetType`).
    static func type(forFileName name: String) -> Components.Schemas.AssetTypeEnum {
        ImmichMediaTypes.isVideo(name) ? .video : .image
    }

    static func fileExtension(_ name: String) -> String {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return name[name.index(after: dot)...].lowercased()
    }

    static func mimeType(forFileName name: String) -> String {
        switch fileExtension(name) {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "heic": "image/heic"
        case "heif": "image/heif"
        case "webp": "image/webp"
        case "gif": "image/gif"
        case "tif", "tiff": "image/tiff"
        case "mov": "video/quicktime"
        case "mp4", "m4v": "video/mp4"
        case "webm": "video/webm"
        case "mkv": "video/x-matroska"
        case "avi": "video/x-msvideo"
        case "3gp": "video/3gpp"
        default: "application/octet-stream"
        }
    }
}

/// A tag: Immich keeps the whole path as its value and the last component as its name, and makes the parents.
struct Tag: Sendable {
    let id: String
    let ownerId: String
    let value: String
    let parentId: String?
    let createdAt: Date
    var updatedAt: Date
    var name: String { value.split(separator: "/").last.map(String.init) ?? value }
}

/// A stack of one owner's assets; its members carry its id, one of them is its primary
/// (`server/src/schema/tables/stack.table.ts`: `ownerId`, `primaryAssetId`, unique).
struct AssetStack: Sendable {
    let id: String
    let ownerId: String
    var primaryAssetId: String
}

struct Album: Sendable {
    let id: String
    let ownerId: String
    var name: String
    var description: String
    var assetIds: [String] = []
    let createdAt: Date
    var updatedAt: Date
    /// The users it is shared with, and as what (`editor` may add assets, `viewer` may not).
    var sharedWith: [String: Components.Schemas.AlbumUserRole] = [:]

    /// The caller's role in it, if it is theirs or shared with them (`album_user`, `access.repository.ts`).
    func role(of user: String) -> Components.Schemas.AlbumUserRole? {
        user == ownerId ? .owner : sharedWith[user]
    }
}

final class Revocations: Sendable {
    private let keys = Locked<Set<String>>([])
    func contains(_ key: String) -> Bool { keys.withLock { $0.contains(key) } }
    func set(_ key: String, _ isRevoked: Bool) {
        keys.withLock { keys in
            if isRevoked { keys.insert(key) } else { keys.remove(key) }
        }
    }
}
