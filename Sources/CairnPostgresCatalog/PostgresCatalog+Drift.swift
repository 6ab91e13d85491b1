import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// The destination's drift in PostgreSQL, as `DriftCatalog` describes it; each write one statement.
extension PostgresCatalog: DriftCatalog {
    public func lastDestinationCheck(_ kind: DestinationCheckKind) async throws -> Date? {
        let kinds = kind == .full ? [DestinationCheckKind.full.rawValue] : DestinationCheckKind.allCases.map(\.rawValue)
        return try await failing("read when the destination was last checked") { [self] in
            let rows = try await client.query("""
                SELECT max(checked_at) FROM cairn.destination_check WHERE kind = ANY(\(kinds)::text[])
                """, logger: logger)
            for try await date in rows.decode(Date?.self) { return date }
            return nil
        }
    }

    public func recordDestinationCheck(_ kind: DestinationCheckKind, found: [DriftRecord], at date: Date) async throws {
        return try await failing("record a check of the destination") { [self] in
            // A full check's DELETE and its INSERT touch the same rows: two statements, one transaction.
            try await client.withTransaction(logger: logger) { connection in
                if kind == .full { try await connection.query("DELETE FROM cairn.destination_drift", logger: logger) }
                try await connection.query("""
                    WITH found AS (
                      INSERT INTO cairn.destination_drift (sha1, state, seen_at)
                      SELECT x.sha1, x.state, to_timestamp(x.seen_at)
                      FROM unnest(\(found.map(\.checksum.hex))::text[], \(found.map(\.state.rawValue))::text[],
                        \(found.map(\.seenAt.timeIntervalSince1970))::double precision[]) AS x(sha1, state, seen_at)
                      ON CONFLICT (sha1) DO UPDATE SET state = excluded.state)
                    INSERT INTO cairn.destination_check (kind, checked_at)
                    VALUES (\(kind.rawValue), to_timestamp(\(date.timeIntervalSince1970)))
                    ON CONFLICT (kind) DO UPDATE SET checked_at = excluded.checked_at
                    """, logger: logger)
            }
        }
    }

    public func destinationDrift() async throws -> [DriftRecord] {
        return try await failing("read the destination's drift") { [self] in
            try await client.query("""
                SELECT sha1, state, seen_at FROM cairn.destination_drift ORDER BY sha1 COLLATE "C"
                """, logger: logger).records(DriftRow.self).compactMap(\.record)
        }
    }

    public func clearDrift(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        return try await failing("clear \(checksums.count) drift records") { [self] in
            try await client.query("""
                DELETE FROM cairn.destination_drift WHERE sha1 = ANY(\(checksums.map(\.hex))::text[])
                """, logger: logger)
        }
    }

    public func forgetLostContent(_ checksums: [Checksum]) async throws {
        guard !checksums.isEmpty else { return }
        let hexes = checksums.map(\.hex)
        return try await failing("forget \(checksums.count) contents the destination lost") { [self] in
            try await client.query("""
                WITH gone AS (DELETE FROM cairn.asset WHERE sha1 = ANY(\(hexes)::text[])),
                drift AS (DELETE FROM cairn.destination_drift WHERE sha1 = ANY(\(hexes)::text[])),
                snapshot AS (UPDATE cairn.source_file SET in_library = false WHERE sha1 = ANY(\(hexes)::text[])),
                stack AS (UPDATE cairn.asset_stack SET linked_at = NULL WHERE primary_sha1 IN (
                  SELECT primary_sha1 FROM cairn.asset_stack WHERE member_sha1 = ANY(\(hexes)::text[])))
                UPDATE cairn.asset_pair SET linked_at = NULL
                WHERE still_sha1 = ANY(\(hexes)::text[]) OR motion_sha1 = ANY(\(hexes)::text[])
                """, logger: logger)
        }
    }
}
