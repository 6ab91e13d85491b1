import CairnCore
import CairnPipeline
import CairnReconcile
import Foundation
internal import TOMLKit

/// One source of settings: raw, typed values by key.
struct Layer {
    enum Value: Equatable {
        case string(String)
        case int(Int)
        case double(Double)
        case bool(Bool)
    }

    let origin: String
    var values: [CairnConfiguration.Key: Value] = [:]

    static func parse(toml text: String, file: String) throws(ConfigurationError) -> Layer {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError(origin: file, key: nil,
                                     reason: "not valid TOML at \(error.source.begin): \(error.description)")
        } catch {
            throw ConfigurationError(origin: file, key: nil, reason: "not valid TOML: \(error)")
        }
        var layer = Layer(origin: file)
        for name in table.keys.sorted() {
            guard let key = CairnConfiguration.Key(rawValue: name) else {
                let known = CairnConfiguration.Key.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError(origin: file, key: name, reason: "unknown key (known: \(known))")
            }
            guard let value = table[name]?.tomlValue else { continue }
            switch value.type {
            case .string: layer.values[key] = .string(value.string ?? "")
            case .int: layer.values[key] = .int(value.int ?? 0)
            case .double: layer.values[key] = .double(value.double ?? 0)
            case .bool: layer.values[key] = .bool(value.bool ?? false)
            default: throw ConfigurationError(origin: file, key: name, reason: "must be a single value, not a \(value.type)")
            }
        }
        return layer
    }

    /// `CAIRN_<KEY>` variables; text is typed here so every error names the variable.
    static func environment(_ environment: [String: String]) throws(ConfigurationError) -> Layer {
        var layer = Layer(origin: "environment")
        for key in CairnConfiguration.Key.allCases {
            guard let text = environment[key.environmentVariable], !text.isEmpty else { continue }
            layer.values[key] = .string(text)
        }
        return layer
    }

    static func flags(_ flags: CairnConfiguration.Overrides) -> Layer {
        var layer = Layer(origin: "command line")
        layer.values[.source] = flags.source.map(Value.string)
        layer.values[.quarantineDays] = flags.quarantineDays.map(Value.int)
        layer.values[.strictness] = flags.strictness.map { Value.string($0.rawValue) }
        layer.values[.maxDelete] = flags.maxDelete.map(Value.int)
        layer.values[.vanishThreshold] = flags.vanishThreshold.map(Value.double)
        layer.values[.applyDeletions] = flags.applyDeletions.map(Value.bool)
        layer.values[.destination] = flags.destination.map(Value.string)
        layer.values[.immichURL] = flags.immichURL.map(Value.string)
        layer.values[.immichAPIKeyFile] = flags.immichAPIKeyFile.map(Value.string)
        layer.values[.destinationDrift] = flags.destinationDrift.map { Value.string($0.rawValue) }
        layer.values[.timeZone] = flags.timeZone.map(Value.string)
        return layer
    }

    func configuration(origins: [CairnConfiguration.Key: String],
                       memoryLimits: MemoryLimits) throws(ConfigurationError) -> CairnConfiguration {
        func fail(_ key: CairnConfiguration.Key, _ reason: String) -> ConfigurationError {
            let origin = origins[key] ?? "default"
            switch origin {
            case "environment": return ConfigurationError(origin: "environment variable \(key.environmentVariable)", key: nil, reason: reason)
            case "command line": return ConfigurationError(origin: "flag --\(key.rawValue.replacingOccurrences(of: "_", with: "-"))", key: nil, reason: reason)
            default: return ConfigurationError(origin: origin, key: key.rawValue, reason: reason)
            }
        }
        func string(_ key: CairnConfiguration.Key) throws(ConfigurationError) -> String? {
            switch values[key] {
            case nil: return nil
            case .string(let text): return text
            default: throw fail(key, "must be a string")
            }
        }
        func int(_ key: CairnConfiguration.Key) throws(ConfigurationError) -> Int? {
            switch values[key] {
            case nil: return nil
            case .int(let number): return number
            case .string(let text):
                guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else { throw fail(key, "must be a whole number, got '\(text)'") }
                return number
            default: throw fail(key, "must be a whole number")
            }
        }
        func double(_ key: CairnConfiguration.Key) throws(ConfigurationError) -> Double? {
            switch values[key] {
            case nil: return nil
            case .double(let number): return number
            case .int(let number): return Double(number)
            case .string(let text):
                guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else {
                    throw fail(key, "must be a number, got '\(text)'")
                }
                return number
            default: throw fail(key, "must be a number")
            }
        }
        func bool(_ key: CairnConfiguration.Key) throws(ConfigurationError) -> Bool? {
            switch values[key] {
            case nil: return nil
            case .bool(let flag): return flag
            case .string(let text):
                switch text.trimmingCharacters(in: .whitespaces).lowercased() {
                case "1", "true", "yes", "on": return true
                case "0", "false", "no", "off": return false
                default: throw fail(key, "must be true or false (or 1/0, yes/no, on/off), got '\(text)'")
                }
            default: throw fail(key, "must be true or false")
            }
        }

        var configuration = CairnConfiguration()
        configuration.source = try string(.source)
        if configuration.source?.isEmpty == true { throw fail(.source, "must not be empty") }

        let quarantineDays = try int(.quarantineDays) ?? ReconcileSettings.defaultQuarantineDays
        guard ReconcileSettings.quarantineDaysRange.contains(quarantineDays) else {
            throw fail(.quarantineDays, "must be within 0...90 days, got \(quarantineDays)")
        }
        var strictness = DeletionStrictness.trusting
        if let text = try string(.strictness) {
            guard let parsed = DeletionStrictness(rawValue: text.lowercased()) else {
                throw fail(.strictness, "must be \"trusting\" or \"strict\", got '\(text)'")
            }
            strictness = parsed
        }
        let maxDelete = try int(.maxDelete)
        if let maxDelete, maxDelete < 0 { throw fail(.maxDelete, "must not be negative, got \(maxDelete)") }
        let vanishThreshold = try double(.vanishThreshold) ?? ReconcileSettings.defaultVanishThreshold
        guard vanishThreshold >= 0, vanishThreshold <= 1 else {
            throw fail(.vanishThreshold, "must be a fraction within 0...1 (0.5 is 50 %), got \(vanishThreshold)")
        }
        do {
            configuration.reconcile = try ReconcileSettings(
                quarantineDays: quarantineDays, strictness: strictness, maxDelete: maxDelete, vanishThreshold: vanishThreshold)
        } catch {
            throw ConfigurationError(origin: "settings", key: error.setting, reason: error.reason)
        }

        configuration.applyDeletions = try bool(.applyDeletions) ?? false
        configuration.clips = try bool(.clips) ?? true
        if let lanes = try string(.lanes) {
            do {
                _ = try PipelineConfiguration.defaults(cores: 1).applying(laneSpec: lanes)
            } catch {
                throw fail(.lanes, error.message)
            }
            configuration.lanes = lanes
        }
        if let text = try string(.memory) {
            let origin: MemoryBudget.Origin = switch origins[.memory] {
            case "environment": .environment
            case "command line": .option
            default: .configurationFile
            }
            do { configuration.memory = try MemoryBudget.given(text, origin: origin, limits: memoryLimits) } catch {
                throw fail(.memory, error.reason)
            }
        } else {
            configuration.memory = .detected(memoryLimits)
        }
        if let destination = try string(.destination) {
            guard ["library", "immich"].contains(destination.lowercased()) else {
                throw fail(.destination, "must be \"library\" or \"immich\", got '\(destination)'")
            }
            configuration.destination = destination.lowercased()
        }
        configuration.immichURL = try string(.immichURL)
        configuration.immichAPIKeyFile = try string(.immichAPIKeyFile)
        configuration.metricsFile = try string(.metricsFile).flatMap { $0.isEmpty ? nil : $0 }
        configuration.metricsPush = try string(.metricsPush).flatMap { $0.isEmpty ? nil : $0 }
        configuration.queue = try string(.queue).flatMap { $0.isEmpty ? nil : $0 }
        configuration.catalog = try string(.catalog).flatMap { $0.isEmpty ? nil : $0 }
        configuration.store = try string(.store).flatMap { $0.isEmpty ? nil : $0 }
        if let days = try int(.checkDestinationDays) {
            guard DestinationCheckPolicy.everyDaysRange.contains(days) else {
                throw fail(.checkDestinationDays, "must be within 1...365 days, got \(days)")
            }
            configuration.destinationCheck.everyDays = days
        }
        if let text = try string(.destinationDrift) {
            guard let mending = DriftMending(rawValue: text.lowercased()) else {
                throw fail(.destinationDrift, "must be \"report\" or \"restore\", got '\(text)'")
            }
            configuration.destinationCheck.mending = mending
        }
        if let text = try string(.archives) {
            guard let handling = ArchiveHandling(rawValue: text.lowercased()) else {
                throw fail(.archives, "must be \"read\" or \"ignore\", got '\(text)'")
            }
            configuration.archives = handling
        }
        if let zone = try string(.timeZone).flatMap({ $0.isEmpty ? nil : $0 }) {
            guard UTCOffset.zone(zone) != nil else {
                throw fail(.timeZone, "not a time zone this machine knows (an IANA name such as Europe/Paris), got '\(zone)'")
            }
            configuration.timeZone = zone
        }
        return configuration
    }
}
