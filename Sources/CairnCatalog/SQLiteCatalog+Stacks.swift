import CairnCore
import Foundation
import GRDB

/// Shots of one moment kept as one: a RAW and the JPEG made with it, or the frames of a burst. The primary is the
/// one shown; the others stay in the library and follow it in listings.
public struct AssetStack: Sendable, Equatable, Codable {
    /// Primary first, then the others in the order they were taken.
    public var members: [Checksum]
    /// `raw+jpeg`, `heic+jpeg`, `burst id` (Apple's, in every frame), `burst name` (a phone's naming) or `burst time`.
    public var basis: String
    public var stackedAt: Date
    /// When the destination made the stack too (Immich: `POST /stacks`); nil until it has, so a stack that failed
    /// there is tried again by the next run.
    public var linkedAt: Date?

    public var primary: Checksum { members[0] }

    public init(members: [Checksum], basis: String, stackedAt: Date, linkedAt: Date? = nil) {
        precondition(members.count >= 2, "a stack has two members or more")
        self.members = members
        self.basis = basis
        self.stackedAt = stackedAt
        self.linkedAt = linkedAt
    }

    /// `stacks` without those that share a member with one before them: a save keeps the first.
    public static func disjoint(_ stacks: [AssetStack]) -> [AssetStack] {
        var seen = Set<Checksum>()
        return stacks.filter { stack in
            guard seen.isDisjoint(with: stack.members) else { return false }
            seen.formUnion(stack.members)
            return true
        }
    }

    /// Stacks from their member rows, which come ordered by primary, then position (a stack's row of its
    /// primary carries its basis and dates).
    public static func grouped(_ rows: [AssetStackRow]) -> [AssetStack] {
        var byPrimary: [Checksum: [AssetStackRow]] = [:]
        var order: [Checksum] = []
        for row in rows {
            if byPrimary[row.primary] == nil { order.append(row.primary) }
            byPrimary[row.primary, default: []].append(row)
        }
        return order.compactMap { primary in
            guard let group = byPrimary[primary], group.count >= 2, let head = group.first, head.member == primary
            else { return nil }
            return AssetStack(members: group.map(\.member), basis: head.basis, stackedAt: head.stackedAt,
                              linkedAt: head.linkedAt)
        }
    }
}

/// One member of a stack, as the catalog keeps it (`asset_stack`): an asset is in one stack at most.
public struct AssetStackRow: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord, CatalogRecord {
    public static let databaseTableName = "asset_stack"
    public var member: Checksum
    public var primary: Checksum
    /// 0 for the primary, then the others in order.
    public var position: Int
    public var basis: String
    public var stackedAt: Date
    public var linkedAt: Date?

    /// The rows of `stack`, primary first.
    public static func rows(of stack: AssetStack) -> [AssetStackRow] {
        stack.members.enumerated().map {
            AssetStackRow(member: $0.element, primary: stack.primary, position: $0.offset, basis: stack.basis,
                          stackedAt: stack.stackedAt, linkedAt: stack.linkedAt)
        }
    }

    enum CodingKeys: String, CodingKey {
        case member = "member_sha1", primary = "primary_sha1", position, basis, stackedAt = "stacked_at",
             linkedAt = "linked_at"
    }
}

/// A dated still, with what stacking looks at.
public struct StackCandidate: Decodable, Sendable, Equatable, FetchableRecord, CatalogRecord {
    public var checksum: Checksum
    public var firstSourcePath: String
    public var captureDate: Date
    public var burstIdentifier: String?
    public var cameraModel: String?
    /// The primary of the stack the still is in already; nil when it is in none.
    public var stackPrimary: Checksum?

    /// Where a page of candidates ends: its last capture date and checksum.
    public struct Position: Sendable, Equatable {
        public var captureDate: Date
        public var checksum: Checksum
    }

    public var position: Position { Position(captureDate: captureDate, checksum: checksum) }

    public init(checksum: Checksum, firstSourcePath: String, captureDate: Date, burstIdentifier: String? = nil,
                cameraModel: String? = nil, stackPrimary: Checksum? = nil) {
        self.checksum = checksum
        self.firstSourcePath = firstSourcePath
        self.captureDate = captureDate
        self.burstIdentifier = burstIdentifier
        self.cameraModel = cameraModel
        self.stackPrimary = stackPrimary
    }

    enum CodingKeys: String, CodingKey {
        case checksum = "sha1", firstSourcePath = "first_source_path", captureDate = "capture_date",
             burstIdentifier = "burst_identifier", cameraModel = "camera_model", stackPrimary = "stack_primary"
    }
}

extension SQLiteCatalog {
    /// Up to `limit` stills with a capture date after `position`, by capture date, then checksum (shots of one moment
    /// come together), each with the stack it is in.
    public func stackCandidates(after position: StackCandidate.Position?, limit: Int) async throws -> [StackCandidate] {
        try await read { db in
            try StackCandidate.fetchAll(db, sql: """
                SELECT asset.sha1, asset.first_source_path, media_probe.capture_date,
                       json_extract(media_probe.probe_json, '$.burstIdentifier') AS burst_identifier,
                       json_extract(media_probe.probe_json, '$.cameraModel') AS camera_model,
                       asset_stack.primary_sha1 AS stack_primary
                FROM asset JOIN media_probe ON media_probe.sha1 = asset.sha1
                LEFT JOIN asset_stack ON asset_stack.member_sha1 = asset.sha1
                WHERE media_probe.capture_date IS NOT NULL AND asset.kind = 'photo'
                  AND (media_probe.capture_date, asset.sha1) > (?, ?)
                ORDER BY media_probe.capture_date, asset.sha1 LIMIT ?
                """, arguments: [position?.captureDate ?? Date.distantPast, position?.checksum.hex ?? "", limit])
        }
    }

    /// Saves each stack whole, replacing the stacks it takes in whole; one that would split a stack is left out.
    public func saveStacks(_ stacks: [AssetStack]) async throws {
        guard !stacks.isEmpty else { return }
        try await write { db in
            for stack in AssetStack.disjoint(stacks) {
                let members = stack.members.map(\.hex)
                let marks = members.map { _ in "?" }.joined(separator: ",")
                let touched = try String.fetchAll(db, sql: """
                    SELECT DISTINCT primary_sha1 FROM asset_stack WHERE member_sha1 IN (\(marks))
                    """, arguments: StatementArguments(members))
                if !touched.isEmpty {
                    let primaries = touched.map { _ in "?" }.joined(separator: ",")
                    let leftBehind = try Int.fetchOne(db, sql: """
                        SELECT count(*) FROM asset_stack
                        WHERE primary_sha1 IN (\(primaries)) AND member_sha1 NOT IN (\(marks))
                        """, arguments: StatementArguments(touched + members)) ?? 0
                    guard leftBehind == 0 else { continue }
                    try db.execute(sql: "DELETE FROM asset_stack WHERE primary_sha1 IN (\(primaries))",
                                   arguments: StatementArguments(touched))
                }
                for row in AssetStackRow.rows(of: stack) { try row.insert(db) }
            }
        }
    }

    /// The stack `checksum` is a member of.
    public func stack(of checksum: Checksum) async throws -> AssetStack? {
        try await read { db in
            try AssetStack.grouped(AssetStackRow.fetchAll(db, sql: """
                SELECT * FROM asset_stack WHERE primary_sha1 = (SELECT primary_sha1 FROM asset_stack WHERE member_sha1 = ?)
                ORDER BY position
                """, arguments: [checksum.hex])).first
        }
    }

    public func allStacks() async throws -> [AssetStack] { try await stacks(awaitingLink: false) }

    public func stacksAwaitingLink() async throws -> [AssetStack] { try await stacks(awaitingLink: true) }

    /// Every stack, by primary; with `awaitingLink`, those the destination has not made yet.
    private func stacks(awaitingLink: Bool) async throws -> [AssetStack] {
        try await read { db in
            try AssetStack.grouped(AssetStackRow.fetchAll(db, sql: """
                SELECT * FROM asset_stack
                \(awaitingLink ? "WHERE primary_sha1 IN (SELECT member_sha1 FROM asset_stack WHERE position = 0 AND linked_at IS NULL)" : "")
                ORDER BY primary_sha1, position
                """))
        }
    }

    public func markStacksLinked(_ primaries: [Checksum], at date: Date) async throws {
        guard !primaries.isEmpty else { return }
        try await write { db in
            let update = try db.cachedStatement(sql: "UPDATE asset_stack SET linked_at = ? WHERE primary_sha1 = ?")
            for primary in primaries { try update.execute(arguments: [StoredDate.text(date), primary.hex]) }
        }
    }
}
