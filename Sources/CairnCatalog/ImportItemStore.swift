import CairnCore
import Foundation
import GRDB

/// One unique piece of new content an import will bring in, as planned (before any heavy work).
public struct ImportItemPlaceholder: Sendable, Equatable {
    public var checksum: Checksum
    public var sourceID: Int64
    public var relativePath: String
    public var kind: MediaKind
    public var size: Int64

    public init(checksum: Checksum, sourceID: Int64, relativePath: String, kind: MediaKind, size: Int64) {
        self.checksum = checksum
        self.sourceID = sourceID
        self.relativePath = relativePath
        self.kind = kind
        self.size = size
    }
}

/// An import item's state columns, as the pipeline flattens its state machine (`ItemStateColumns`).
public struct ImportItemState: Sendable, Equatable {
    /// `placeholder`, `queued`, `transferring`, `probing`, `thumbnailing`, `synthesizing`, `ready`,
    /// `failed` or `cancelled`.
    public var state: String
    public var phase: String?
    public var reason: String?
    public var attempts: Int
    public var retryable: Bool
    /// Set before a phase's work starts, cleared once its outcome is saved: still set at start-up means
    /// the worker died while working on the item.
    public var inFlight: Bool
    public var crashCount: Int
    public var isDuplicate: Bool

    public init(state: String, phase: String? = nil, reason: String? = nil, attempts: Int = 0, retryable: Bool = false,
                inFlight: Bool = false, crashCount: Int = 0, isDuplicate: Bool = false) {
        self.state = state
        self.phase = phase
        self.reason = reason
        self.attempts = attempts
        self.retryable = retryable
        self.inFlight = inFlight
        self.crashCount = crashCount
        self.isDuplicate = isDuplicate
    }
}

/// One row of `import_item`, with its source's root.
public struct ImportItemRecord: Sendable, Equatable {
    public var id: Int64
    public var checksum: Checksum
    public var sourceID: Int64
    public var sourceRoot: String
    public var relativePath: String
    public var kind: MediaKind
    public var size: Int64
    public var state: ImportItemState
    public var updatedAt: Date
}

/// What probing an original found, as columns plus the whole probe as JSON.
public struct MediaProbeRecord: Sendable, Equatable {
    public var checksum: Checksum
    public var container: String
    /// As displayed (orientation applied).
    public var width: Int?
    public var height: Int?
    public var durationSeconds: Double?
    public var captureDate: Date?
    public var cameraMake: String?
    public var cameraModel: String?
    public var latitude: Double?
    public var longitude: Double?
    public var altitude: Double?
    /// The first video stream's codec.
    public var codec: String?
    public var probeJSON: String
    public var probedAt: Date

    public init(checksum: Checksum, container: String, width: Int?, height: Int?, durationSeconds: Double?,
                captureDate: Date?, cameraMake: String?, cameraModel: String?, latitude: Double?, longitude: Double?,
                altitude: Double?, codec: String?, probeJSON: String, probedAt: Date) {
        self.checksum = checksum
        self.container = container
        self.width = width
        self.height = height
        self.durationSeconds = durationSeconds
        self.captureDate = captureDate
        self.cameraMake = cameraMake
        self.cameraModel = cameraModel
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.codec = codec
        self.probeJSON = probeJSON
        self.probedAt = probedAt
    }
}

/// A file made from an original: its thumbnail, preview or clip.
public struct DerivedFileRecord: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        case thumbnail, preview, clip
    }

    public var checksum: Checksum
    public var role: Role
    /// Relative to the library root.
    public var path: String
    /// `webp`, `jpeg`, or the clip's codec.
    public var format: String
    public var width: Int
    public var height: Int
    public var byteCount: Int64
    public var durationSeconds: Double?
    public var createdAt: Date

    public init(checksum: Checksum, role: Role, path: String, format: String, width: Int, height: Int,
                byteCount: Int64, durationSeconds: Double? = nil, createdAt: Date) {
        self.checksum = checksum
        self.role = role
        self.path = path
        self.format = format
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.durationSeconds = durationSeconds
        self.createdAt = createdAt
    }
}

extension Catalog {
    /// Rows no run will move on by itself: ready, cancelled, or failed without hope of a retry.
    private static let terminalCondition =
        "(state IN ('ready', 'cancelled') OR (state = 'failed' AND retryable = 0))"

    // MARK: Import items

    /// The root path of the source with `id`, if there is one.
    public func sourceRoot(_ id: Int64) throws -> String? {
        try pool.read { db in try String.fetchOne(db, sql: "SELECT root_path FROM source WHERE id = ?", arguments: [id]) }
    }

    /// Persists one placeholder per checksum and returns the row ids, in order. A row that already holds a
    /// checksum is reused, never doubled: its location is updated to the new sighting, and when it was
    /// finished (ready, cancelled, failed for good) it starts again as a placeholder; an unfinished row
    /// keeps its state, so it resumes where it stood.
    public func insertImportPlaceholders(_ placeholders: [ImportItemPlaceholder], now: Date = Date()) throws -> [Int64] {
        guard !placeholders.isEmpty else { return [] }
        let terminal = Self.terminalCondition
        return try pool.write { db in
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO import_item (sha1, source_id, relative_path, kind, size, state, updated_at)
                VALUES (?, ?, ?, ?, ?, 'placeholder', ?)
                ON CONFLICT (sha1) DO UPDATE SET
                    source_id = excluded.source_id, relative_path = excluded.relative_path,
                    kind = excluded.kind, size = excluded.size, updated_at = excluded.updated_at,
                    state = CASE WHEN \(terminal) THEN 'placeholder' ELSE state END,
                    phase = CASE WHEN \(terminal) THEN NULL ELSE phase END,
                    reason = CASE WHEN \(terminal) THEN NULL ELSE reason END,
                    attempts = CASE WHEN \(terminal) THEN 0 ELSE attempts END,
                    crash_count = CASE WHEN \(terminal) THEN 0 ELSE crash_count END,
                    duplicate = CASE WHEN \(terminal) THEN 0 ELSE duplicate END,
                    retryable = CASE WHEN \(terminal) THEN 0 ELSE retryable END
                """)
            let select = try db.cachedStatement(sql: "SELECT id FROM import_item WHERE sha1 = ?")
            var ids: [Int64] = []
            ids.reserveCapacity(placeholders.count)
            for placeholder in placeholders {
                try upsert.execute(arguments: [
                    placeholder.checksum.hex, placeholder.sourceID, placeholder.relativePath, placeholder.kind.rawValue,
                    placeholder.size, now,
                ])
                guard let id = try Int64.fetchOne(select, arguments: [placeholder.checksum.hex]) else {
                    throw DatabaseError(message: "import_item row for \(placeholder.checksum.hex) vanished")
                }
                ids.append(id)
            }
            return ids
        }
    }

    /// Items an earlier (or this) run left unfinished, or in flight when its worker died, by id.
    public func unfinishedImportItems() throws -> [ImportItemRecord] {
        try fetchImportItems(where: "NOT \(Self.terminalCondition) OR in_flight = 1")
    }

    /// The same items, one at a time, so a caller that keeps only part of each row never holds them all.
    /// `owingTransfer`: only items whose original is not in place yet (an archive-only run leaves the others,
    /// which owe only derivatives, to a run that makes them).
    public func forEachUnfinishedImportItem(owingTransfer: Bool = false, _ body: (ImportItemRecord) throws -> Void) throws {
        let unfinished = "(NOT \(Self.terminalCondition) OR in_flight = 1)"
        guard owingTransfer else { return try forEachImportItem(where: unfinished, body) }
        try forEachImportItem(where: unfinished + " AND \(Self.owingTransferCondition)", body)
    }

    /// Rows whose original is not in place yet: before or in the transfer, or failed in it.
    private static let owingTransferCondition =
        "(state IN ('placeholder', 'queued', 'transferring') OR (state = 'failed' AND phase = 'transfer'))"

    /// How many items have their original in place and wait for a run with derivatives on (`--derivatives off`
    /// left them, or a run stopped between the transfer and the thumbnail).
    public func importItemsOwingDerivatives() throws -> Int {
        try pool.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM import_item
                WHERE NOT \(Self.terminalCondition) AND NOT \(Self.owingTransferCondition)
                """) ?? 0
        }
    }

    /// Every import item, by id.
    public func importItems() throws -> [ImportItemRecord] {
        try fetchImportItems(where: "1")
    }

    public func importItem(_ checksum: Checksum) throws -> ImportItemRecord? {
        try fetchImportItems(where: "sha1 = ?", arguments: [checksum.hex]).first
    }

    /// Saves item states in one transaction, with the stages' `rows` first (their files are durable by now: a group
    /// commit); for an id given several times, the last one wins.
    public func saveImportItemStates(_ updates: [(id: Int64, state: ImportItemState)], with rows: StageRows = StageRows(),
                                     now: Date = Date()) throws {
        guard !updates.isEmpty || !rows.isEmpty else { return }
        do { try saveImportItemStates(updates, rows, now: now) } catch { throw CatalogError.naming(error, path: path) }
    }

    private func saveImportItemStates(_ updates: [(id: Int64, state: ImportItemState)], _ rows: StageRows, now: Date) throws {
        try pool.write { db in
            for asset in rows.assets { try asset.insert(db, onConflict: .ignore) }
            for probe in rows.probes { try Self.saveMediaProbe(probe, in: db) }
            try Self.saveDerivedFiles(rows.derivedFiles, in: db)
            let update = try db.cachedStatement(sql: """
                UPDATE import_item SET state = ?, phase = ?, reason = ?, attempts = ?, retryable = ?,
                    in_flight = ?, crash_count = ?, duplicate = ?, updated_at = ?
                WHERE id = ?
                """)
            for (id, state) in updates {
                try update.execute(arguments: [
                    state.state, state.phase, state.reason, state.attempts, state.retryable, state.inFlight,
                    state.crashCount, state.isDuplicate, now, id,
                ])
            }
        }
    }

    /// `condition` names `import_item` columns unqualified: `source` shares none of them but `id`.
    private func fetchImportItems(where condition: String, arguments: StatementArguments = []) throws -> [ImportItemRecord] {
        var result: [ImportItemRecord] = []
        try forEachImportItem(where: condition, arguments: arguments) { result.append($0) }
        return result
    }

    private func forEachImportItem(where condition: String, arguments: StatementArguments = [],
                                   _ body: (ImportItemRecord) throws -> Void) throws {
        try pool.read { db in
            let rows = try ImportItemRow.fetchCursor(db, sql: """
                SELECT \(ImportItemRow.selection)
                FROM import_item i JOIN source s ON s.id = i.source_id
                WHERE \(condition)
                ORDER BY i.id
                """, arguments: arguments)
            while let row = try rows.next() {
                if let record = row.record { try body(record) }
            }
        }
    }

    // MARK: Probes and derived files

    /// Records (or replaces) what probing an original found.
    /// Marks an asset as kept without preview, with the one-line reason.
    public func markKeptWithoutPreview(_ checksum: Checksum, reason: String) throws {
        try pool.write { db in
            try db.execute(sql: "UPDATE asset SET no_preview_reason = ? WHERE sha1 = ?", arguments: [reason, checksum.hex])
        }
    }

    /// Why an asset has no preview, or nil when it has (or will get) one.
    public func noPreviewReason(_ checksum: Checksum) throws -> String? {
        try pool.read { db in
            try String.fetchOne(db, sql: "SELECT no_preview_reason FROM asset WHERE sha1 = ?", arguments: [checksum.hex])
        }
    }

    public func saveMediaProbe(_ probe: MediaProbeRecord) throws {
        try pool.write { db in try Self.saveMediaProbe(probe, in: db) }
    }

    private static func saveMediaProbe(_ probe: MediaProbeRecord, in db: Database) throws {
        try db.execute(sql: """
            INSERT OR REPLACE INTO media_probe (sha1, container, width, height, duration_seconds, capture_date,
                camera_make, camera_model, latitude, longitude, altitude, codec, probe_json, probed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, arguments: [
                probe.checksum.hex, probe.container, probe.width, probe.height, probe.durationSeconds,
                probe.captureDate, probe.cameraMake, probe.cameraModel, probe.latitude, probe.longitude,
                probe.altitude, probe.codec, probe.probeJSON, probe.probedAt,
            ])
    }

    public func mediaProbe(_ checksum: Checksum) throws -> MediaProbeRecord? {
        try pool.read { db in
            try MediaProbeRow.filter(MediaProbeRow.Columns.sha1 == checksum.hex).fetchOne(db)?.record
        }
    }

    public func mediaProbeCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM media_probe") ?? 0 }
    }

    /// Records (or replaces) derived files in one transaction; call once the files are durable at `path`.
    public func saveDerivedFiles(_ files: [DerivedFileRecord]) throws {
        guard !files.isEmpty else { return }
        try pool.write { db in try Self.saveDerivedFiles(files, in: db) }
    }

    private static func saveDerivedFiles(_ files: [DerivedFileRecord], in db: Database) throws {
        guard !files.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO derived_file (sha1, role, path, format, width, height, byte_count,
                duration_seconds, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for file in files {
            try insert.execute(arguments: [
                file.checksum.hex, file.role.rawValue, file.path, file.format, file.width, file.height,
                file.byteCount, file.durationSeconds, file.createdAt,
            ])
        }
    }

    /// Derived files of one original, or of all when `checksum` is nil, by checksum then role.
    public func derivedFiles(_ checksum: Checksum? = nil) throws -> [DerivedFileRecord] {
        try pool.read { db in
            var request = DerivedFileRow.all()
            if let checksum { request = request.filter(DerivedFileRow.Columns.sha1 == checksum.hex) }
            return try request.order(DerivedFileRow.Columns.sha1, DerivedFileRow.Columns.role).fetchAll(db)
                .compactMap(\.record)
        }
    }
}
