import CairnCore
import Foundation

/// Checksums proven deleted at the source, each with the moment it was first confirmed.
///
/// That moment starts the quarantine clock. Confirming is first-write-wins: re-confirming a checksum
/// never resets its clock, so a file that flaps (deleted, restored, deleted) still ages out predictably.
/// A checksum seen again at the source is removed.
public struct ConfirmedDeletions: Sendable, Equatable {
    public private(set) var stamps: [Checksum: Date]

    public init(_ stamps: [Checksum: Date] = [:]) { self.stamps = stamps }

    public var count: Int { stamps.count }
    public func contains(_ checksum: Checksum) -> Bool { stamps[checksum] != nil }
    public subscript(checksum: Checksum) -> Date? { stamps[checksum] }

    /// Stamps every checksum not yet confirmed with `date`; returns those newly stamped, sorted.
    @discardableResult
    public mutating func confirm(_ checksums: some Sequence<Checksum>, at date: Date) -> [Checksum] {
        var stamped: [Checksum] = []
        for checksum in checksums where stamps[checksum] == nil {
            stamps[checksum] = date
            stamped.append(checksum)
        }
        return stamped.sorted()
    }

    /// Forgets checksums that reappeared at the source.
    public mutating func remove(_ checksums: some Sequence<Checksum>) {
        for checksum in checksums { stamps[checksum] = nil }
    }

    /// Checksums confirmed at or after `date`, sorted: what `pending exclude --all-confirmed-since` protects.
    public func confirmed(since date: Date) -> [Checksum] {
        stamps.filter { $0.value >= date }.keys.sorted()
    }
}

extension ConfirmedDeletions: Codable {
    // Keyed by hex so the JSON reads as {"<sha1>": "<date>"}, not as an array of alternating pairs.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let byHex = try container.decode([String: Date].self)
        var stamps: [Checksum: Date] = [:]
        for (hex, date) in byHex {
            guard let checksum = Checksum(hex: hex) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a 40-digit SHA1: \(hex)")
            }
            stamps[checksum] = date
        }
        self.stamps = stamps
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: stamps.map { ($0.key.hex, $0.value) }))
    }
}
