import CairnCore
import Foundation
import GRDB

/// A source folder cairn imports from. Per-source state (snapshots, later reconciliation) hangs off its id.
public struct SourceRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "source"
    public var id: Int64?
    public var rootPath: String
    public var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, rootPath = "root_path", createdAt = "created_at"
    }

    public enum Columns {
        public static let id = Column(CodingKeys.id)
    }
}

/// One piece of content in the library, keyed by its SHA1.
public struct AssetRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "asset"
    public var checksum: Checksum
    public var kind: MediaKind
    public var size: Int64
    /// The extension of the first file seen with this content, lowercased ("" when none).
    public var originalExtension: String
    /// Where this content was first seen, relative to its source root.
    public var firstSourcePath: String
    /// Where the original lives, relative to the library root; empty when the destination keeps it (`remoteID`).
    public var originalPath: String
    /// The destination's id for this asset when the destination is a server (an Immich asset id); nil in a library.
    public var remoteID: String?
    public var importedAt: Date
    public var runID: String?
    /// Set when the original is kept but cannot be rendered here (no decoder, a RAW with no usable image).
    public var noPreviewReason: String?

    public init(
        checksum: Checksum, kind: MediaKind, size: Int64, originalExtension: String, firstSourcePath: String,
        originalPath: String, remoteID: String? = nil, importedAt: Date, runID: String?, noPreviewReason: String? = nil
    ) {
        self.remoteID = remoteID
        self.noPreviewReason = noPreviewReason
        self.checksum = checksum
        self.kind = kind
        self.size = size
        self.originalExtension = originalExtension
        self.firstSourcePath = firstSourcePath
        self.originalPath = originalPath
        self.importedAt = importedAt
        self.runID = runID
    }

    enum CodingKeys: String, CodingKey {
        case checksum = "sha1", kind, size, originalExtension = "original_extension",
             firstSourcePath = "first_source_path", originalPath = "original_path", remoteID = "remote_id",
             importedAt = "imported_at", runID = "run_id", noPreviewReason = "no_preview_reason"
    }

    public enum Columns {
        public static let checksum = Column(CodingKeys.checksum)
        public static let runID = Column(CodingKeys.runID)
    }
}

/// The counters of one run, as a person reads them in the summary.
/// Catalog rows the import stages made, held until their files are durable and then written with the item
/// states of the same batch, in one transaction (the group commit of `CatalogItemStateStore`).
public struct StageRows: Sendable {
    public var assets: [AssetRecord] = []
    public var probes: [MediaProbeRecord] = []
    public var derivedFiles: [DerivedFileRecord] = []
    /// Content kept, byte-identical, without a preview, and why (`asset.no_preview_reason`).
    public var keptWithoutPreview: [(checksum: Checksum, reason: String)] = []

    public init(assets: [AssetRecord] = [], probes: [MediaProbeRecord] = [], derivedFiles: [DerivedFileRecord] = [],
                keptWithoutPreview: [(checksum: Checksum, reason: String)] = []) {
        self.assets = assets
        self.probes = probes
        self.derivedFiles = derivedFiles
        self.keptWithoutPreview = keptWithoutPreview
    }

    public var isEmpty: Bool { assets.isEmpty && probes.isEmpty && derivedFiles.isEmpty && keptWithoutPreview.isEmpty }

    /// Adds `other`'s rows after these.
    public mutating func append(_ other: StageRows) {
        assets += other.assets
        probes += other.probes
        derivedFiles += other.derivedFiles
        keptWithoutPreview += other.keptWithoutPreview
    }
    /// Whether some row points at a file (a probe does not): only then must the batch wait for a sync.
    public var pointsAtFiles: Bool { !assets.isEmpty || !derivedFiles.isEmpty }
}

/// One run of a command over the library.
public struct RunRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "run"
    /// Sortable by start time, e.g. `20261122T032015Z-7f3a`; also names the run's log and trash folder.
    public var id: String
    public var command: String
    public var sourceID: Int64?
    public var startedAt: Date
    public var endedAt: Date?
    public var outcome: RunOutcome
    public var message: String?
    public var counts: RunCounts
    /// The narration's summary of the run (timeline, counts, failures) as JSON, for `cairn status`.
    public var summary: String?

    public init(id: String, command: String, sourceID: Int64?, startedAt: Date) {
        self.id = id
        self.command = command
        self.sourceID = sourceID
        self.startedAt = startedAt
        self.outcome = .running
        self.counts = RunCounts()
    }

    enum CodingKeys: String, CodingKey {
        case id, command, sourceID = "source_id", startedAt = "started_at", endedAt = "ended_at", outcome, message, counts,
             summary
    }

    public enum Columns {
        public static let id = Column(CodingKeys.id)
        public static let command = Column(CodingKeys.command)
        public static let startedAt = Column(CodingKeys.startedAt)
        public static let outcome = Column(CodingKeys.outcome)
    }
}

/// A file that failed in a run, with the reason a person can act on.
public struct RunFailureRecord: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "run_failure"
    public var runID: String
    public var relativePath: String
    public var phase: FailurePhase
    public var reason: String
    /// Nil for a failure recorded before categories were kept (counted as `other`).
    public var category: FailureCategory?

    public init(runID: String, relativePath: String, phase: FailurePhase, reason: String,
                category: FailureCategory? = nil) {
        self.runID = runID
        self.relativePath = relativePath
        self.phase = phase
        self.reason = reason
        self.category = category
    }

    enum CodingKeys: String, CodingKey {
        case runID = "run_id", relativePath = "relative_path", phase, reason, category
    }

    public enum Columns {
        public static let runID = Column(CodingKeys.runID)
        public static let relativePath = Column(CodingKeys.relativePath)
    }
}

extension Checksum: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { hex.databaseValue }
    public static func fromDatabaseValue(_ dbValue: DatabaseValue) -> Checksum? {
        String.fromDatabaseValue(dbValue).flatMap { Checksum(hex: $0) }
    }
}

extension MediaKind: DatabaseValueConvertible {}
