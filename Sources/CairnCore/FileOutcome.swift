import Foundation

/// What became of one file in a run: the scheduler's word for an item it ended, a line of `--report`, and what
/// the run's counts count. One derivation from an item's stored state (`init(state:isDuplicate:leftUnfinished:)`)
/// serves the scheduler and the catalog alike, so the report read back from `import_item` says what the lanes did.
public enum FileOutcome: Hashable, Sendable {
    /// Brought into the library this run.
    case imported
    /// Its bytes were already in the library, or held by another file of this source.
    case duplicate
    /// Unchanged since the last run (its checksum came from the cache); nothing to do.
    case unchanged
    /// Not imported on purpose (a symbolic link, an item withdrawn). Boxed, like `failed`, so the common cases
    /// (and a report's line per file) stay small.
    indirect case skipped(reason: String)
    indirect case failed(phase: FailurePhase, reason: FailureReason)
    /// The run stopped before the file was done; the next run resumes it at `resumeAt`.
    case unfinished(resumeAt: FailurePhase)
    /// Its original is in the library; its probe and derivatives wait for a run with derivatives on.
    case archived

    public enum Kind: String, CaseIterable, Codable, Sendable {
        case imported, duplicate, unchanged, skipped, failed, unfinished, archived
    }

    public var kind: Kind {
        switch self {
        case .imported: return .imported
        case .duplicate: return .duplicate
        case .unchanged: return .unchanged
        case .skipped: return .skipped
        case .failed: return .failed
        case .unfinished: return .unfinished
        case .archived: return .archived
        }
    }

    /// What an item of the lanes came to, from where it stands: `leftUnfinished` when the run stopped before the
    /// item ended. An item that ended still owing a lane ended there on purpose (an archive-only run).
    public init(state: ItemState, isDuplicate: Bool, leftUnfinished: Bool) {
        if leftUnfinished {
            self = .unfinished(resumeAt: FailurePhase(state.resumeLane ?? .transfer))
            return
        }
        switch state {
        case .failed(let failure): self = .failed(phase: FailurePhase(failure.phase), reason: failure.reason)
        case .cancelled: self = .skipped(reason: "cancelled")
        default:
            if state.resumeLane != nil {
                self = .archived
            } else {
                self = isDuplicate ? .duplicate : .imported
            }
        }
    }

    /// The phase a failure or an unfinished file names.
    public var phase: FailurePhase? {
        switch self {
        case .failed(let phase, _): return phase
        case .unfinished(let phase): return phase
        default: return nil
        }
    }

    /// The reason a failure or a skip gives.
    public var reason: FailureReason? {
        switch self {
        case .failed(_, let reason): return reason
        case .skipped(let reason): return FailureReason(reason)
        default: return nil
        }
    }
}

extension FailurePhase {
    /// The phase of an import lane.
    public init(_ lane: Lane) {
        switch lane {
        case .transfer: self = .transfer
        case .metadata: self = .metadata
        case .thumbnail: self = .thumbnail
        case .synthesis: self = .synthesis
        }
    }
}

/// One file's line: where it is, its checksum when known, and what became of it. Written to `--report FILE` as
/// one JSON object per line with the keys `path`, `outcome`, `checksum` (40 hexadecimal digits), `phase` (where it
/// failed, or where it resumes), `reason` and `category` (a failure's `FailureCategory`), the last four when they
/// apply.
public struct FileOutcomeEntry: Hashable, Sendable {
    public var path: String
    /// Kept as 20 bytes, since a report may hold a line per file of a huge source.
    public var checksum: Checksum?
    public var outcome: FileOutcome

    public init(path: String, checksum: Checksum? = nil, outcome: FileOutcome) {
        self.path = path
        self.checksum = checksum
        self.outcome = outcome
    }

    /// An item's line, its outcome read from where it stands (`FileOutcome(state:isDuplicate:leftUnfinished:)`).
    public init(_ record: ItemRecord, leftUnfinished: Bool) {
        self.init(path: record.item.relativePath, checksum: record.item.checksum,
                  outcome: FileOutcome(state: record.state, isDuplicate: record.isDuplicate,
                                       leftUnfinished: leftUnfinished))
    }

    /// One JSON object per line, keys sorted.
    public static func jsonLines(_ entries: [FileOutcomeEntry]) throws -> Data {
        let encoder = Timestamp.jsonEncoder()
        var data = Data()
        for entry in entries {
            data.append(try encoder.encode(entry))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}

extension FileOutcomeEntry: Codable {
    enum CodingKeys: String, CodingKey { case path, outcome, checksum, phase, reason, category }

    public init(from decoder: any Decoder) throws {
        let line = try decoder.container(keyedBy: CodingKeys.self)
        path = try line.decode(String.self, forKey: .path)
        checksum = try line.decodeIfPresent(Checksum.self, forKey: .checksum)
        let phase = try line.decodeIfPresent(FailurePhase.self, forKey: .phase)
        var reason = try line.decodeIfPresent(FailureReason.self, forKey: .reason)
        if let category = try line.decodeIfPresent(FailureCategory.self, forKey: .category) { reason?.category = category }
        switch try line.decode(FileOutcome.Kind.self, forKey: .outcome) {
        case .imported: outcome = .imported
        case .duplicate: outcome = .duplicate
        case .unchanged: outcome = .unchanged
        case .archived: outcome = .archived
        case .skipped: outcome = .skipped(reason: reason?.description ?? "")
        case .failed: outcome = .failed(phase: phase ?? .transfer, reason: reason ?? FailureReason(""))
        case .unfinished: outcome = .unfinished(resumeAt: phase ?? .transfer)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var line = encoder.container(keyedBy: CodingKeys.self)
        try line.encode(path, forKey: .path)
        try line.encode(outcome.kind, forKey: .outcome)
        try line.encodeIfPresent(checksum, forKey: .checksum)
        try line.encodeIfPresent(outcome.phase, forKey: .phase)
        try line.encodeIfPresent(outcome.reason, forKey: .reason)
        if case .failed(_, let reason) = outcome { try line.encode(reason.category, forKey: .category) }
    }
}
