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
        /// The stack it is in, and that stack's primary asset (absent when in none).
        var stackId: String?
        var stackPrimaryAssetId: String?
    }

    var assets: [AssetState]
    var creations: [String: Int]
    var forceDeletes: Int
    var requests: Int
}
