import Foundation

/// What Google Photos knew of a photo beyond its date and place, as its Takeout JSON says: starred, archived, its
/// caption, the people named in it, whether it sat in Google's trash, and whether a partner shared it. Kept with the
/// probe (`MediaProbe.googlePhotos`), so every catalog holds it without a table of its own.
public struct GooglePhotosFacts: Codable, Sendable, Equatable {
    public var favorite: Bool?
    public var archived: Bool?
    public var description: String?
    /// The names Google Photos put on the faces in it, as written, in the JSON's order.
    public var people: [String]?
    public var trashed: Bool?
    /// Shared into the account by a partner (Google's partner sharing), not taken by its owner.
    public var fromPartner: Bool?

    public init(favorite: Bool? = nil, archived: Bool? = nil, description: String? = nil, people: [String]? = nil,
                trashed: Bool? = nil, fromPartner: Bool? = nil) {
        self.favorite = favorite
        self.archived = archived
        self.description = description
        self.people = people
        self.trashed = trashed
        self.fromPartner = fromPartner
    }

    /// True when the JSON said nothing beyond date and place.
    public var isEmpty: Bool { self == GooglePhotosFacts() }

    /// Whether `name` is one of its people (any case, as a person types it).
    public func names(_ name: String) -> Bool {
        (people ?? []).contains { $0.compare(name, options: [.caseInsensitive, .diacriticInsensitive]) == .orderedSame }
    }
}
