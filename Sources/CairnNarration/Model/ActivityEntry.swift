import Foundation

/// One line of the activity feed: "03:20:15  hashed  IMG_4612.HEIC".
public struct ActivityEntry: Codable, Sendable, Equatable {
    public var time: Date
    public var kind: NarrationEvent.Kind
    public var detail: String
}
