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
    public var reconcile = ReconcileSettings.defaults
    /// Whether a sync trashes past-quarantine candidates (`--apply-deletions`).
    public var applyDeletions = false
    /// A `--lanes` spec, already checked against the pipeline's rules.
    public var lanes: String?
    public var clips = true
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
        public var destination: String?
        public var immichURL: String?
        public var immichAPIKeyFile: String?
        public var destinationDrift: DriftMending?
        public var timeZone: String?

        public init(source: String? = nil, quarantineDays: Int? = nil, strictness: DeletionStrictness? = nil, maxDelete: Int? = nil,
                    vanishThreshold: Double? = nil, applyDeletions: Bool? = nil, destination: String? = nil,
                    immichURL: String? = nil, immichAPIKeyFile: String? = nil, destinationDrift: DriftMending? = nil,
                    timeZone: String? = nil) {
            self.destinationDrift = destinationDrift
            self.timeZone = timeZone
            self.destination = destination
            self.immichURL = immichURL
            self.immichAPIKeyFile = immichAPIKeyFile
            self.source = source
            self.quarantineDays = quarantineDays
            self.strictness = strictness
            self.maxDelete = maxDelete
            self.vanishThreshold = vanishThreshold
            self.applyDeletions = applyDeletions
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
