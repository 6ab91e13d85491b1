import CairnCore
import CairnPipeline
import CairnReconcile
import Foundation
internal import TOMLKit

/// What a sync runs with, resolved from flags, the environment, the config file and defaults, in
/// that order of precedence (a flag beats `CAIRN_*`, which beats `cairn.toml`, which beats the default).
///
/// `cairn.toml` (`--config FILE`, else `<library>/cairn.toml`; a missing default file is no error):
/// ```toml
/// source = "/media/card/DCIM"
/// quarantine_days = 14        # 0...90
/// strictness = "trusting"     # or "strict"
/// max_delete = 200            # per run; absent: no cap
/// vanish_threshold = 0.5      # fraction of the last run's files
/// apply_deletions = false
/// lanes = "transfer=4,thumbnail=2"
/// clips = true
/// destination = "immich"      # or "library" (the default)
/// immich_url = "https://photos.example.com"
/// immich_api_key_file = "/etc/cairn/immich.key"   # the key itself never goes in this file
/// check_destination_days = 7  # days between full checks of the destination (1...365)
/// destination_drift = "report"  # or "restore": bring back what the destination lost and a source holds
/// time_zone = "Europe/Paris"  # the zone of dates without an offset sent to Immich (default: this machine's)
/// memory = "1G"               # what decodes and encodes may hold at once (default: from the cgroup limit or RAM)
/// metrics_file = "/var/lib/prometheus/node-exporter/cairn.prom"
/// metrics_push = "http://127.0.0.1:9091"            # a Pushgateway
/// queue = "postgres://cairn@db.lan/cairn"            # shared work; a password goes in $PGPASSWORD
/// catalog = "postgres://cairn@db.lan/photos"         # the catalog in PostgreSQL (import); password likewise
/// store = "s3://photos/library"                     # the library's files in an S3-compatible store (import)
/// archives = "read"           # .zip/.tar/.tgz in the source walked in place (default "ignore")
/// ```
public struct CairnConfiguration: Sendable, Equatable {
    public var source: String?
    public var reconcile: ReconcileSettings
    /// Whether a sync trashes past-quarantine candidates (`--apply-deletions`).
    public var applyDeletions: Bool
    /// A `--lanes` spec, already checked against the pipeline's rules.
    public var lanes: String?
    public var clips: Bool
    /// Where new content goes: "library" or "immich".
    public var destination = "library"
    public var immichURL: String?
    public var immichAPIKeyFile: String?
    /// Where `import` and `sync` write their Prometheus metrics (for node_exporter's textfile collector).
    public var metricsFile: String?
    /// A Pushgateway that `import` and `sync` push their metrics to.
    public var metricsPush: String?
    /// The PostgreSQL database an import's and a sync's thumbnails and clips are shared through (`--queue`).
    public var queue: String?
    /// The PostgreSQL database the library's catalog lives in (`--catalog`), instead of its SQLite file.
    public var catalog: String?
    /// The S3-compatible store the library's files live in (`--store`), instead of its folder.
    public var store: String?
    /// When a sync checks the destination for drift (`check_destination_days`) and what it does (`destination_drift`).
    public var destinationCheck = DestinationCheckPolicy()
    /// The IANA zone of dates sent without an offset of their own (`time_zone`); nil: this machine's.
    public var timeZone: String?
    /// What decodes and encodes may hold at once (`memory`); nil only before `resolve`.
    public var memory: MemoryBudget?
    /// Whether archives in the source are walked in place (`archives`).
    public var archives = ArchiveHandling.ignore
    /// The config file that was read, if one was.
    public var file: String?

    public init(source: String? = nil, reconcile: ReconcileSettings = .defaults, applyDeletions: Bool = false,
                lanes: String? = nil, clips: Bool = true, file: String? = nil) {
        self.source = source
        self.reconcile = reconcile
        self.applyDeletions = applyDeletions
        self.lanes = lanes
        self.clips = clips
        self.file = file
    }

    public static let fileName = "cairn.toml"

    /// The settings as given on the command line; `nil` means "not given".
    /// The lanes this configuration asks for on `cores` cores (`lanes` was checked when it was read).
    public func pipelineConfiguration(cores: Int) throws -> PipelineConfiguration {
        var pipeline = PipelineConfiguration.defaults(cores: cores)
        if let lanes { pipeline = try pipeline.applying(laneSpec: lanes) }
        pipeline.clipsEnabled = clips
        pipeline.memory = memory ?? .detected(.read())
        return pipeline
    }

    public struct Overrides: Sendable, Equatable {
        public var source: String?
        public var quarantineDays: Int?
        public var strictness: DeletionStrictness?
        public var maxDelete: Int?
        public var vanishThreshold: Double?
        public var applyDeletions: Bool?
        public var lanes: String?
        public var clips: Bool?
        public var destination: String?
        public var immichURL: String?
        public var immichAPIKeyFile: String?
        public var metricsFile: String?
        public var metricsPush: String?
        public var destinationDrift: DriftMending?
        public var timeZone: String?

        public init(source: String? = nil, quarantineDays: Int? = nil, strictness: DeletionStrictness? = nil, maxDelete: Int? = nil,
                    vanishThreshold: Double? = nil, applyDeletions: Bool? = nil, lanes: String? = nil, clips: Bool? = nil,
                    destination: String? = nil, immichURL: String? = nil, immichAPIKeyFile: String? = nil,
                    metricsFile: String? = nil, metricsPush: String? = nil, destinationDrift: DriftMending? = nil,
                    timeZone: String? = nil) {
            self.destinationDrift = destinationDrift
            self.timeZone = timeZone
            self.metricsFile = metricsFile
            self.metricsPush = metricsPush
            self.destination = destination
            self.immichURL = immichURL
            self.immichAPIKeyFile = immichAPIKeyFile
            self.source = source
            self.quarantineDays = quarantineDays
            self.strictness = strictness
            self.maxDelete = maxDelete
            self.vanishThreshold = vanishThreshold
            self.applyDeletions = applyDeletions
            self.lanes = lanes
            self.clips = clips
        }
    }

    /// Every key, as written in `cairn.toml`, with its environment variable.
    public enum Key: String, CaseIterable, Sendable {
        case source, quarantineDays = "quarantine_days", strictness, maxDelete = "max_delete"
        case vanishThreshold = "vanish_threshold", applyDeletions = "apply_deletions", lanes, clips
        case destination, immichURL = "immich_url", immichAPIKeyFile = "immich_api_key_file"
        case metricsFile = "metrics_file", metricsPush = "metrics_push", queue, catalog
        case checkDestinationDays = "check_destination_days", destinationDrift = "destination_drift"
        case timeZone = "time_zone", memory, store, archives

        public var environmentVariable: String { "CAIRN_" + rawValue.uppercased() }
    }

    /// Resolves the configuration.
    /// - Parameters:
    ///   - configFile: `--config FILE`; must exist when given. Without it `<libraryRoot>/cairn.toml` is read if present.
    ///   - memoryLimits: the cgroup and physical limits a `memory` left unset is taken from.
    public static func resolve(
        configFile: String?, libraryRoot: String, environment: [String: String] = ProcessInfo.processInfo.environment,
        flags: Overrides = Overrides(), memoryLimits: MemoryLimits = .read()
    ) throws(ConfigurationError) -> CairnConfiguration {
        let path = configFile ?? libraryRoot + "/" + fileName
        var layers: [Layer] = []
        if let text = try readFile(path, required: configFile != nil) {
            layers.append(try Layer.parse(toml: text, file: path))
        }
        layers.append(try Layer.environment(environment))
        layers.append(Layer.flags(flags))

        var merged = Layer(origin: "")
        var origins: [Key: String] = [:]
        for layer in layers {
            for key in Key.allCases where layer.values[key] != nil {
                merged.values[key] = layer.values[key]
                origins[key] = layer.origin
            }
        }
        var configuration = try merged.configuration(origins: origins, memoryLimits: memoryLimits)
        configuration.file = layers.first?.origin == path ? path : nil
        return configuration
    }

    private static func readFile(_ path: String, required: Bool) throws(ConfigurationError) -> String? {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch CocoaError.fileReadNoSuchFile where !required {
            return nil
        } catch CocoaError.fileReadNoSuchFile {
            throw ConfigurationError(origin: path, key: nil, reason: "no such file")
        } catch {
            throw ConfigurationError(origin: path, key: nil, reason: "cannot be read: \(error.localizedDescription)")
        }
    }
}

/// A configuration value that cannot be used: where it came from (file, variable or flag), the key, the reason.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The config file's path, `environment variable CAIRN_X`, or `flag --x`.
    public let origin: String
    public let key: String?
    public let reason: String

    public var description: String {
        if let key { return "\(origin): \(key): \(reason)" }
        return "\(origin): \(reason)"
    }
}

/// One source of settings: raw, typed values by key.
private struct Layer {
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
        layer.values[.lanes] = flags.lanes.map(Value.string)
        layer.values[.clips] = flags.clips.map(Value.bool)
        layer.values[.destination] = flags.destination.map(Value.string)
        layer.values[.immichURL] = flags.immichURL.map(Value.string)
        layer.values[.immichAPIKeyFile] = flags.immichAPIKeyFile.map(Value.string)
        layer.values[.metricsFile] = flags.metricsFile.map(Value.string)
        layer.values[.metricsPush] = flags.metricsPush.map(Value.string)
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
