import CairnCatalog
import CairnCore
import Foundation
import Logging
import PostgresNIO

/// What the stages made of originals (assets, probes, derived files, reasons for no preview) in PostgreSQL, written
/// with the item states of the same batch and read back as the SQLite catalog's records.
extension PostgresCatalog {
    /// The assets first: a probe, a derived file or a reason may be about one of them. An asset already there stays
    /// as it is; a probe or a derived file replaces the one before it (the last of a batch wins).
    static func saveStageRows(_ rows: StageRows, on connection: PostgresConnection, logger: Logger) async throws {
        if !rows.assets.isEmpty {
            let assets = rows.assets
            try await connection.query("""
                INSERT INTO cairn.asset (sha1, kind, size, original_extension, first_source_path, original_path,
                  remote_id, imported_at, run_id, no_preview_reason)
                SELECT x.sha1, x.kind, x.size, x.original_extension, x.first_source_path, x.original_path,
                  NULLIF(x.remote_id, ''), x.imported_at, NULLIF(x.run_id, ''), NULLIF(x.no_preview_reason, '')
                FROM unnest(\(assets.map(\.checksum.hex))::text[], \(assets.map(\.kind.rawValue))::text[],
                  \(assets.map(\.size))::bigint[], \(assets.map(\.originalExtension))::text[],
                  \(assets.map(\.firstSourcePath))::text[], \(assets.map(\.originalPath))::text[],
                  \(assets.map { $0.remoteID ?? "" })::text[],
                  \(assets.map(\.importedAt))::timestamptz[], \(assets.map { $0.runID ?? "" })::text[],
                  \(assets.map { $0.noPreviewReason ?? "" })::text[])
                  AS x(sha1, kind, size, original_extension, first_source_path, original_path, remote_id, imported_at,
                    run_id, no_preview_reason)
                ON CONFLICT (sha1) DO NOTHING
                """, logger: logger)
        }
        let probes = rows.probes.lastOfEach(by: \.checksum)
        if !probes.isEmpty {
            try await connection.query("""
                INSERT INTO cairn.media_probe AS p (sha1, container, width, height, duration_seconds, capture_date,
                  camera_make, camera_model, latitude, longitude, altitude, codec, probe_json, probed_at)
                SELECT x.sha1, x.container, x.width, x.height, x.duration_seconds, to_timestamp(x.capture_date),
                  x.camera_make, x.camera_model, x.latitude, x.longitude, x.altitude, x.codec, x.probe_json,
                  to_timestamp(x.probed_at)
                FROM jsonb_to_recordset(\(try json(probes))::jsonb) AS x(sha1 text,
                  container text, width integer, height integer, duration_seconds double precision,
                  capture_date double precision, camera_make text, camera_model text, latitude double precision,
                  longitude double precision, altitude double precision, codec text, probe_json text,
                  probed_at double precision)
                ON CONFLICT (sha1) DO UPDATE SET container = excluded.container, width = excluded.width,
                  height = excluded.height, duration_seconds = excluded.duration_seconds,
                  capture_date = excluded.capture_date, camera_make = excluded.camera_make,
                  camera_model = excluded.camera_model, latitude = excluded.latitude, longitude = excluded.longitude,
                  altitude = excluded.altitude, codec = excluded.codec, probe_json = excluded.probe_json,
                  probed_at = excluded.probed_at
                """, logger: logger)
        }
        let derived = rows.derivedFiles.lastOfEach { DerivedKey(checksum: $0.checksum, role: $0.role) }
        if !derived.isEmpty {
            // NaN stands for no duration (an array of optionals has no binding).
            try await connection.query("""
                INSERT INTO cairn.derived_file (sha1, role, path, format, width, height, byte_count, duration_seconds,
                  created_at)
                SELECT x.sha1, x.role, x.path, x.format, x.width, x.height, x.byte_count,
                  NULLIF(x.duration_seconds, 'NaN'), x.created_at
                FROM unnest(\(derived.map(\.checksum.hex))::text[], \(derived.map(\.role.rawValue))::text[],
                  \(derived.map(\.path))::text[], \(derived.map(\.format))::text[], \(derived.map(\.width))::bigint[],
                  \(derived.map(\.height))::bigint[], \(derived.map(\.byteCount))::bigint[],
                  \(derived.map { $0.durationSeconds ?? .nan })::float8[], \(derived.map(\.createdAt))::timestamptz[])
                  AS x(sha1, role, path, format, width, height, byte_count, duration_seconds, created_at)
                ON CONFLICT (sha1, role) DO UPDATE SET path = excluded.path, format = excluded.format,
                  width = excluded.width, height = excluded.height, byte_count = excluded.byte_count,
                  duration_seconds = excluded.duration_seconds, created_at = excluded.created_at
                """, logger: logger)
        }
        let kept = rows.keptWithoutPreview.lastOfEach(by: \.checksum)
        if !kept.isEmpty {
            let checksums = kept.map(\.checksum.hex), reasons = kept.map(\.reason)
            try await connection.query("""
                UPDATE cairn.asset a SET no_preview_reason = x.reason
                FROM unnest(\(checksums)::text[], \(reasons)::text[]) AS x(sha1, reason) WHERE a.sha1 = x.sha1
                """, logger: logger)
        }
    }

    // MARK: Reads

    public func asset(_ checksum: Checksum) async throws -> AssetRecord? {
        try await assets(where: "sha1 = $1", checksum.hex).first
    }

    public func mediaProbe(_ checksum: Checksum) async throws -> MediaProbeRecord? {
        return try await failing("read the probe of \(checksum)") { [self] in
            let rows = try await client.query("""
                SELECT sha1, container, width, height, duration_seconds, capture_date, camera_make, camera_model, latitude,
                  longitude, altitude, codec, probe_json, probed_at
                FROM cairn.media_probe WHERE sha1 = \(checksum.hex)
                """, logger: logger)
            return try await rows.records(MediaProbeRecord.self).first
        }
    }

    public func derivedFiles(of checksum: Checksum) async throws -> [DerivedFileRecord] {
        return try await failing("read the derived files of \(checksum)") { [self] in
            let rows = try await client.query("""
                SELECT sha1, role, path, format, width, height, byte_count, duration_seconds, created_at
                FROM cairn.derived_file WHERE sha1 = \(checksum.hex) ORDER BY role
                """, logger: logger)
            return try await rows.records(DerivedFileRow.self).compactMap(\.record)
        }
    }
}

private struct DerivedKey: Hashable {
    var checksum: Checksum
    var role: DerivedFileRecord.Role
}

/// The library's assets and probes as a whole, in PostgreSQL.
extension PostgresCatalog {
    static let assetColumns = """
        sha1, kind, size, original_extension, first_source_path, original_path, remote_id, imported_at, run_id,
        no_preview_reason
        """

    public func assetChecksums() async throws -> Set<Checksum> {
        return try await failing("read the library's content") { [self] in
            Set(try await client.query("SELECT sha1 FROM cairn.asset", logger: logger).checksums())
        }
    }

    public func assetCount() async throws -> Int { try await count("cairn.asset") }

    public func allAssets() async throws -> [AssetRecord] { try await assets(where: "true", nil) }

    public func assets(broughtInBy runID: String) async throws -> [AssetRecord] { try await assets(where: "run_id = $1", runID) }

    public func mediaProbes(ofRun runID: String, mentioning marker: String) async throws -> [MediaProbeRecord] {
        return try await failing("read the probes of run \(runID)") { [self] in
            let rows = try await client.query("""
                SELECT p.sha1, p.container, p.width, p.height, p.duration_seconds, p.capture_date, p.camera_make,
                  p.camera_model, p.latitude, p.longitude, p.altitude, p.codec, p.probe_json, p.probed_at
                FROM cairn.media_probe p JOIN cairn.asset a ON a.sha1 = p.sha1
                WHERE a.run_id = \(runID) AND strpos(p.probe_json, \(marker)) > 0
                """, logger: logger)
            return try await rows.records(MediaProbeRecord.self)
        }
    }

    func count(_ table: String) async throws -> Int {
        return try await failing("count \(table)") { [self] in
            for try await count in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"),
                                                          logger: logger).decode(Int.self) { return count }
            return 0
        }
    }

    /// The assets matching `condition` (on `cairn.asset`, with `value` as `$1`), in `order`, up to `limit`.
    func assets(where condition: String, _ value: String?, order: String = "sha1 COLLATE \"C\"",
                limit: Int? = nil) async throws -> [AssetRecord] {
        return try await failing("read assets") { [self] in
            var binds = PostgresBindings()
            if let value { binds.append(value) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT \(Self.assetColumns) FROM cairn.asset WHERE \(condition) ORDER BY \(order)\(limit.map { " LIMIT \($0)" } ?? "")
                """, binds: binds), logger: logger)
            return try await rows.records(AssetRecord.self)
        }
    }
}
