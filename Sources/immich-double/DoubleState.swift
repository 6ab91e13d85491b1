import Foundation

/// The JSON of `GET /_double/state`; Tests/CairnTesting/ImmichDouble.swift decodes the same shape.
struct DoubleState: Codable, Sendable {
    struct AssetState: Codable, Sendable {
        var id: String
        var owner: String
        var checksum: String
        var originalFileName: String
        var type: String
        var visibility: String
        var livePhotoVideoId: String?
        var isTrashed: Bool
        var sidecarBytes: Int
        var bytes: Int
        var fileCreatedAt: String
        /// Set by `PUT /assets/{id}` (what an upload cannot carry).
        var dateTimeOriginal: String?
        /// The zone Immich keeps with it ("UTC+2"), from the offset it came with.
        var timeZone: String?
        var latitude: Double?
        var longitude: Double?
        var duration: Int?
        var isFavorite: Bool
        /// The asset's caption (Immich keeps it in its EXIF row; "" when none).
        var description: String
        var tags: [String]
        var albums: [String]
        /// The stack it is in, and that stack's primary asset (null when in none).
        var stackId: String?
        var stackPrimaryAssetId: String?

        // Written out even when nil: the tests read `livePhotoVideoId: null` as "not linked", not as a missing key.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encode(owner, forKey: .owner)
            try c.encode(checksum, forKey: .checksum)
            try c.encode(originalFileName, forKey: .originalFileName)
            try c.encode(type, forKey: .type)
            try c.encode(visibility, forKey: .visibility)
            try c.encode(livePhotoVideoId, forKey: .livePhotoVideoId)
            try c.encode(isTrashed, forKey: .isTrashed)
            try c.encode(sidecarBytes, forKey: .sidecarBytes)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(fileCreatedAt, forKey: .fileCreatedAt)
            try c.encode(dateTimeOriginal, forKey: .dateTimeOriginal)
            try c.encode(timeZone, forKey: .timeZone)
            try c.encode(latitude, forKey: .latitude)
            try c.encode(longitude, forKey: .longitude)
            try c.encode(duration, forKey: .duration)
            try c.encode(isFavorite, forKey: .isFavorite)
            try c.encode(description, forKey: .description)
            try c.encode(tags, forKey: .tags)
            try c.encode(albums, forKey: .albums)
            try c.encode(stackId, forKey: .stackId)
            try c.encode(stackPrimaryAssetId, forKey: .stackPrimaryAssetId)
        }
    }

    var assets: [AssetState]
    var creations: [String: Int]
    var forceDeletes: Int
    var requests: Int
}
