import CairnCatalog
import CairnCore
import Foundation
import PostgresNIO

/// Stacks in PostgreSQL, as `AssetLinkCatalog` describes them.
extension PostgresCatalog {
    public func stackCandidates(after position: StackCandidate.Position?, limit: Int) async throws -> [StackCandidate] {
        let date = position?.captureDate ?? Date.distantPast, after = position?.checksum.hex ?? ""
        return try await failing("read the stills to stack") { [self] in
            let rows = try await client.query("""
                SELECT a.sha1, a.first_source_path, p.capture_date,
                  p.probe_json::jsonb ->> 'burstIdentifier' AS burst_identifier,
                  p.probe_json::jsonb ->> 'cameraModel' AS camera_model,
                  s.primary_sha1 AS stack_primary
                FROM cairn.asset a JOIN cairn.media_probe p ON p.sha1 = a.sha1
                LEFT JOIN cairn.asset_stack s ON s.member_sha1 = a.sha1
                WHERE p.capture_date IS NOT NULL AND a.kind = 'photo' AND (p.capture_date, a.sha1) > (\(date), \(after))
                ORDER BY p.capture_date, a.sha1 LIMIT \(limit)
                """, logger: logger)
            return try await rows.records(StackCandidate.self)
        }
    }

    public func saveStacks(_ stacks: [AssetStack]) async throws {
        guard !stacks.isEmpty else { return }
        return try await failing("save \(stacks.count) stacks") { [self] in
            try await client.withTransaction(logger: logger) { connection in
                // One saver at a time: what a stack replaces is decided on what the table holds.
                try await connection.query("LOCK TABLE cairn.asset_stack IN SHARE ROW EXCLUSIVE MODE", logger: logger)
                for stack in AssetStack.disjoint(stacks) {
                    let members = stack.members.map(\.hex)
                    var touched: [String] = []
                    for try await primary in try await connection.query("""
                        SELECT DISTINCT primary_sha1 FROM cairn.asset_stack WHERE member_sha1 = ANY(\(members)::text[])
                        """, logger: logger).decode(String.self) { touched.append(primary) }
                    if !touched.isEmpty {
                        var splits = false
                        for try await _ in try await connection.query("""
                            SELECT member_sha1 FROM cairn.asset_stack
                            WHERE primary_sha1 = ANY(\(touched)::text[]) AND NOT member_sha1 = ANY(\(members)::text[]) LIMIT 1
                            """, logger: logger).decode(String.self) { splits = true }
                        if splits { continue }
                        try await connection.query("""
                            DELETE FROM cairn.asset_stack WHERE primary_sha1 = ANY(\(touched)::text[])
                            """, logger: logger)
                    }
                    let positions = Array(members.indices)
                    try await connection.query("""
                        INSERT INTO cairn.asset_stack (member_sha1, primary_sha1, position, basis, stacked_at)
                        SELECT m, \(stack.primary.hex), p, \(stack.basis), to_timestamp(\(stack.stackedAt.timeIntervalSince1970))
                        FROM unnest(\(members)::text[], \(positions)::integer[]) AS x(m, p)
                        """, logger: logger)
                }
            }
        }
    }

    public func stack(of checksum: Checksum) async throws -> AssetStack? {
        try await stacks(where: """
            primary_sha1 = (SELECT primary_sha1 FROM cairn.asset_stack WHERE member_sha1 = $1)
            """, checksum.hex).first
    }

    public func allStacks() async throws -> [AssetStack] { try await stacks(where: "true", nil) }

    public func stacksAwaitingLink() async throws -> [AssetStack] {
        try await stacks(where: """
            primary_sha1 IN (SELECT member_sha1 FROM cairn.asset_stack WHERE position = 0 AND linked_at IS NULL)
            """, nil)
    }

    public func markStacksLinked(_ primaries: [Checksum], at date: Date) async throws {
        guard !primaries.isEmpty else { return }
        return try await failing("record \(primaries.count) stacks made at the destination") { [self] in
            try await client.query("""
                UPDATE cairn.asset_stack SET linked_at = to_timestamp(\(date.timeIntervalSince1970))
                WHERE primary_sha1 = ANY(\(primaries.map(\.hex))::text[])
                """, logger: logger)
        }
    }

    private func stacks(where condition: String, _ checksum: String?) async throws -> [AssetStack] {
        return try await failing("read stacks") { [self] in
            var binds = PostgresBindings()
            if let checksum { binds.append(checksum) }
            let rows = try await client.query(PostgresQuery(unsafeSQL: """
                SELECT member_sha1, primary_sha1, position, basis, stacked_at, linked_at FROM cairn.asset_stack
                WHERE \(condition) ORDER BY primary_sha1 COLLATE "C", position
                """, binds: binds), logger: logger)
            return AssetStack.grouped(try await rows.records(AssetStackRow.self))
        }
    }
}
