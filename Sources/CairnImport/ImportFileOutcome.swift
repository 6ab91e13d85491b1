import CairnCatalog
import CairnCore
import CairnPipeline
import CairnScanner
import Foundation

/// What became of one file of the source in one import: a line of `--report FILE`.
public struct ImportFileOutcome: Sendable, Equatable, Codable {
    public enum Outcome: String, Sendable, Codable, CaseIterable {
        /// Brought into the library (ready) this run.
        case imported
        /// Its content was already in the library, or held by another file of this source.
        case duplicate
        /// Unchanged since the last run (its checksum came from the cache); nothing to do.
        case unchanged
        /// Not imported on purpose (a symbolic link).
        case skipped
        case failed
        /// The run stopped before the file was done; the next run resumes it.
        case unfinished
        /// Its original is in the library (`--derivatives off`); a run with derivatives on makes the rest.
        case archived
    }

    public var path: String
    public var outcome: Outcome
    /// Written as 40 hexadecimal digits; kept as 20 bytes, since a report may hold a line per file of a huge source.
    public var checksum: Checksum?
    /// Where it failed, or the lane it resumes in (written as `scanning`, `hashing`, `transfer` ...).
    public var phase: FailurePhase?
    public var reason: FailureReason?

    public init(path: String, outcome: Outcome, checksum: Checksum? = nil, phase: FailurePhase? = nil,
                reason: FailureReason? = nil) {
        self.path = path
        self.outcome = outcome
        self.checksum = checksum
        self.phase = phase
        self.reason = reason
    }

    /// One JSON object per line, keys sorted.
    public static func jsonLines(_ outcomes: [ImportFileOutcome]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for outcome in outcomes {
            data.append(try encoder.encode(outcome))
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }

    /// Every media file's outcome, one at a time, in path order, from the run tables: hashing failures, the
    /// pipeline's outcome for the first file holding each piece of content it handled, duplicates and unchanged
    /// files; then items resumed from other sources. Content planned as new that the run stopped before reaching
    /// is unfinished, at the transfer; with `stoppedHashing`, a file left unread is unfinished, at the hashing. One
    /// at a time, since a caller that only counts them should not hold a line per file.
    static func forEach(files: RunFileTable, hashFailures: [ImportFailure], stoppedHashing: Bool = false,
                        _ body: (ImportFileOutcome) -> Void) throws {
        let failures = Dictionary(hashFailures.map { ($0.relativePath, $0) }, uniquingKeysWith: { first, _ in first })
        try files.forEachFileLine { line in
            if line.hashFailed, let failure = failures[line.path] {
                body(ImportFileOutcome(path: line.path, outcome: .failed, phase: failure.phase, reason: failure.reason))
                return
            }
            guard let checksum = line.checksum else {
                if stoppedHashing, !line.hashFailed { body(ImportFileOutcome(path: line.path, outcome: .unfinished, phase: .hashing)) }
                return
            }
            if let stored = line.outcome {
                body(ImportFileOutcome(path: line.path, checksum: checksum, stored: stored))
            } else if line.isFirst, !line.inLibrary {
                body(ImportFileOutcome(path: line.path, outcome: .unfinished, checksum: checksum, phase: .transfer))
            } else {
                body(ImportFileOutcome(path: line.path, outcome: line.hashedThisRun ? .duplicate : .unchanged,
                                       checksum: checksum))
            }
        }
    }

    /// Symbolic links skipped and paths the walk could not read.
    static func outcomes(scan report: ScanReport) -> [ImportFileOutcome] {
        report.symlinksSkipped.map {
            ImportFileOutcome(path: $0, outcome: .skipped, reason: "symbolic link (never followed)")
        } + report.issues.map {
            ImportFileOutcome(path: $0.relativePath, outcome: .failed, phase: .scanning, reason: FailureReason($0.reason))
        }
    }

    /// A pipeline outcome as the run tables kept it.
    private init(path: String, checksum: Checksum, stored: RunFileTable.ContentOutcome) {
        let lane = stored.phase.flatMap(Lane.init(rawValue:))
        switch FileOutcome.Kind(rawValue: stored.outcome) {
        case .imported: self.init(path: path, outcome: .imported, checksum: checksum)
        case .duplicate: self.init(path: path, outcome: .duplicate, checksum: checksum)
        case .skipped: self.init(path: path, outcome: .skipped, checksum: checksum, reason: stored.reason)
        case .failed:
            self.init(path: path, outcome: .failed, checksum: checksum, phase: lane.map(FailurePhase.init),
                      reason: stored.reason)
        case .unfinished:
            self.init(path: path, outcome: .unfinished, checksum: checksum, phase: lane.map(FailurePhase.init))
        case .archived: self.init(path: path, outcome: .archived, checksum: checksum)
        case nil: self.init(path: path, outcome: .failed, checksum: checksum, reason: FailureReason("unknown outcome \(stored.outcome)"))
        }
    }
}

extension FailurePhase {
    /// The phase of an import lane.
    init(_ lane: Lane) {
        switch lane {
        case .transfer: self = .transfer
        case .metadata: self = .metadata
        case .thumbnail: self = .thumbnail
        case .synthesis: self = .synthesis
        }
    }
}
