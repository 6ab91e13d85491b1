import CairnCore
import Foundation

/// What became of one file in a run.
public enum FileOutcome: Hashable, Sendable {
    case imported
    /// Its bytes were already in the library.
    case duplicate
    /// Not imported on purpose (not media, excluded, withdrawn). Boxed, like `failed`, so the common cases (and a
    /// report's line per file) stay small.
    indirect case skipped(reason: String)
    indirect case failed(phase: Lane, reason: FailureReason)
    /// The run stopped before the file finished; the next run resumes at `resumeAt`.
    case unfinished(resumeAt: Lane)
    /// Its original is in the library; its probe and derivatives wait for a run with derivatives on.
    case archived

    public var kind: Kind {
        switch self {
        case .imported: return .imported
        case .duplicate: return .duplicate
        case .skipped: return .skipped
        case .failed: return .failed
        case .unfinished: return .unfinished
        case .archived: return .archived
        }
    }

    public enum Kind: String, CaseIterable, Codable, Sendable {
        case imported, duplicate, skipped, failed, unfinished, archived
    }
}

/// One line of the report.
public struct FileOutcomeEntry: Hashable, Sendable, Codable {
    public var path: String
    public var checksum: Checksum?
    public var outcome: FileOutcome

    public init(path: String, checksum: Checksum? = nil, outcome: FileOutcome) {
        self.path = path
        self.checksum = checksum
        self.outcome = outcome
    }

    private enum CodingKeys: String, CodingKey { case path, checksum, outcome, phase, reason }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encodeIfPresent(checksum, forKey: .checksum)
        try container.encode(outcome.kind, forKey: .outcome)
        switch outcome {
        case .imported, .duplicate, .archived: break
        case .skipped(let reason): try container.encode(reason, forKey: .reason)
        case .failed(let phase, let reason):
            try container.encode(phase, forKey: .phase)
            try container.encode(reason, forKey: .reason)
        case .unfinished(let lane): try container.encode(lane, forKey: .phase)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        path = try container.decode(String.self, forKey: .path)
        checksum = try container.decodeIfPresent(Checksum.self, forKey: .checksum)
        switch try container.decode(FileOutcome.Kind.self, forKey: .outcome) {
        case .imported: outcome = .imported
        case .duplicate: outcome = .duplicate
        case .skipped: outcome = .skipped(reason: try container.decode(String.self, forKey: .reason))
        case .failed:
            outcome = .failed(phase: try container.decode(Lane.self, forKey: .phase),
                              reason: try container.decode(FailureReason.self, forKey: .reason))
        case .unfinished: outcome = .unfinished(resumeAt: try container.decode(Lane.self, forKey: .phase))
        case .archived: outcome = .archived
        }
    }
}

/// Every file's outcome, grouped for the end-of-run summary and written as JSON lines for `--report FILE`.
public struct OutcomeReport: Hashable, Sendable {
    public var entries: [FileOutcomeEntry]

    public init(entries: [FileOutcomeEntry]) {
        self.entries = entries
    }

    public func count(_ kind: FileOutcome.Kind) -> Int { entries.count { $0.outcome.kind == kind } }

    /// Entries by outcome, each group in path order.
    public var grouped: [FileOutcome.Kind: [FileOutcomeEntry]] {
        Dictionary(grouping: entries, by: { $0.outcome.kind }).mapValues { $0.sorted { $0.path < $1.path } }
    }

    /// "12 imported · 3 duplicate · 2 failed" (kinds with none left out).
    public var summary: String {
        let parts = FileOutcome.Kind.allCases.compactMap { kind -> String? in
            let n = count(kind)
            return n == 0 ? nil : "\(groupedDigits(n)) \(kind.rawValue)"
        }
        return parts.isEmpty ? "nothing to import" : parts.joined(separator: " · ")
    }

    /// One line per failed file: "path: failed in metadata: reason".
    public var failureLines: [String] {
        (grouped[.failed] ?? []).compactMap { entry in
            guard case .failed(let phase, let reason) = entry.outcome else { return nil }
            return "\(entry.path): failed in \(phase.rawValue): \(reason)"
        }
    }

    /// One JSON object per line, keys sorted, each line ending in a newline.
    public func jsonLines() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for entry in entries {
            data.append(try encoder.encode(entry))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }

    /// Parses what `jsonLines()` wrote.
    public static func parse(jsonLines data: Data) throws -> OutcomeReport {
        let decoder = JSONDecoder()
        let lines = data.split(separator: UInt8(ascii: "\n"))
        return OutcomeReport(entries: try lines.map { try decoder.decode(FileOutcomeEntry.self, from: Data($0)) })
    }
}

/// How a run ended.
public enum RunCompletion: String, Hashable, Sendable, Codable {
    case finished
    case finishedWithFailures
    /// `maxErrors` reached: no new work was taken; unfinished items resume next run.
    case stoppedAtErrorLimit
    /// `cancel(deadline:)`; unfinished items resume next run.
    case interrupted
}

/// What `PipelineScheduler.run` returns.
public struct PipelineRunResult: Hashable, Sendable {
    public var completion: RunCompletion
    public var report: OutcomeReport
    public var progress: PipelineProgress
    public var statistics: LaneStatistics

    public var exitStatus: ExitStatus {
        switch completion {
        case .finished: return .success
        case .finishedWithFailures, .stoppedAtErrorLimit: return .someFilesFailed
        case .interrupted: return .interrupted
        }
    }
}

/// Lane occupancy seen during a run: evidence that back-pressure held.
public struct LaneStatistics: Hashable, Sendable {
    /// Most items ever waiting in each lane's inbox at once.
    public var maxInboxOccupancy: [Lane: Int] = [:]
    /// Most items ever worked on at once per lane.
    public var maxInFlight: [Lane: Int] = [:]
    /// Times an item finished a lane and had to hold its slot because the next inbox was full.
    public var backPressureWaits: [Lane: Int] = [:]

    public init() {}
}

/// One lane at one moment.
public struct LaneOccupancy: Hashable, Sendable {
    /// Items waiting for the lane (backlog, inbox, due retries).
    public var waiting: Int
    public var running: Int
    /// Items done with the lane that wait for room in the next one.
    public var heldByBackPressure: Int
}
