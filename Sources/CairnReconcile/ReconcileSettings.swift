import Foundation

/// The knobs of reconciliation, as read from `cairn.toml` / the environment / flags.
///
/// Decoding fills every missing key with its default, so configs written by older versions keep
/// loading as new settings are added.
public struct ReconcileSettings: Codable, Sendable, Equatable {
    public static let quarantineDaysRange = 0...90
    public static let defaultQuarantineDays = 14
    public static let defaultVanishThreshold = 0.5
    public static let defaultMassOffloadThreshold = 50

    /// Days a confirmed deletion waits before it may be trashed.
    public var quarantineDays: Int
    public var strictness: DeletionStrictness
    /// At most this many deletions per run; the rest wait for the next run. `nil`: no cap.
    public var maxDelete: Int?
    /// Fraction (0...1) of the last run's files that may vanish in one run before every deletion is held.
    public var vanishThreshold: Double
    /// More confirmed deletions than this in one run raise the mass-offload warning.
    public var massOffloadThreshold: Int

    public static let defaults = ReconcileSettings(
        validQuarantineDays: defaultQuarantineDays, strictness: .trusting, maxDelete: nil,
        vanishThreshold: defaultVanishThreshold, massOffloadThreshold: defaultMassOffloadThreshold)

    public init(
        quarantineDays: Int = defaultQuarantineDays,
        strictness: DeletionStrictness = .trusting,
        maxDelete: Int? = nil,
        vanishThreshold: Double = defaultVanishThreshold,
        massOffloadThreshold: Int = defaultMassOffloadThreshold
    ) throws(ReconcileSettingsError) {
        guard Self.quarantineDaysRange.contains(quarantineDays) else {
            throw ReconcileSettingsError(
                setting: "quarantineDays", reason: "must be within 0...90 days, got \(quarantineDays)")
        }
        if let maxDelete, maxDelete < 0 {
            throw ReconcileSettingsError(setting: "maxDelete", reason: "must not be negative, got \(maxDelete)")
        }
        guard vanishThreshold >= 0, vanishThreshold <= 1 else {
            throw ReconcileSettingsError(
                setting: "vanishThreshold", reason: "must be a fraction within 0...1, got \(vanishThreshold)")
        }
        guard massOffloadThreshold >= 0 else {
            throw ReconcileSettingsError(
                setting: "massOffloadThreshold", reason: "must not be negative, got \(massOffloadThreshold)")
        }
        self.init(validQuarantineDays: quarantineDays, strictness: strictness, maxDelete: maxDelete,
                  vanishThreshold: vanishThreshold, massOffloadThreshold: massOffloadThreshold)
    }

    private init(validQuarantineDays: Int, strictness: DeletionStrictness, maxDelete: Int?,
                 vanishThreshold: Double, massOffloadThreshold: Int) {
        self.quarantineDays = validQuarantineDays
        self.strictness = strictness
        self.maxDelete = maxDelete
        self.vanishThreshold = vanishThreshold
        self.massOffloadThreshold = massOffloadThreshold
    }

    /// The quarantine window in seconds. Days are counted as 86,400 s, so eligibility never depends
    /// on a calendar, a time zone or daylight saving.
    public var quarantineInterval: TimeInterval { TimeInterval(quarantineDays) * 86_400 }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(
                quarantineDays: container.decodeIfPresent(Int.self, forKey: .quarantineDays)
                    ?? Self.defaultQuarantineDays,
                strictness: container.decodeIfPresent(DeletionStrictness.self, forKey: .strictness) ?? .trusting,
                maxDelete: container.decodeIfPresent(Int.self, forKey: .maxDelete),
                vanishThreshold: container.decodeIfPresent(Double.self, forKey: .vanishThreshold)
                    ?? Self.defaultVanishThreshold,
                massOffloadThreshold: container.decodeIfPresent(Int.self, forKey: .massOffloadThreshold)
                    ?? Self.defaultMassOffloadThreshold)
        } catch let error as ReconcileSettingsError {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}

/// A setting outside its allowed range; names the setting and the reason in one line.
public struct ReconcileSettingsError: Error, Equatable, CustomStringConvertible {
    public let setting: String
    public let reason: String
    public var description: String { "setting \(setting) \(reason)" }
}
