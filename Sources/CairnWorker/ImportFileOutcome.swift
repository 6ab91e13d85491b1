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

    /// Every media file's outcome, one at a time: hashing failures, the pipeline's outcome for the first file
    /// holding each piece of content it handled, duplicates and unchanged files; then items resumed from other
    /// sources. One at a time, since a caller that only counts them should not hold a line per file.
    static func forEach(hashed: ImportRun.Hashed, pipeline: OutcomeReport, _ body: (ImportFileOutcome) -> Void) {
        var byChecksum: [Checksum: FileOutcomeEntry] = [:]
        byChecksum.reserveCapacity(pipeline.entries.count)
        for entry in pipeline.entries { if let checksum = entry.checksum { byChecksum[checksum] = entry } }
        let hashFailures = Dictionary(hashed.failures.map { ($0.relativePath, $0) }, uniquingKeysWith: { first, _ in first })
        // A flag a file (a byte each), not a set of indexes (tens of bytes each).
        var hashedThisRun = [Bool](repeating: false, count: hashed.report.mediaFiles.count)
        for index in hashed.prepared.toHash { hashedThisRun[index] = true }
        for (index, file) in hashed.report.mediaFiles.enumerated() {
            if let failure = hashFailures[file.relativePath] {
                body(ImportFileOutcome(path: file.relativePath, outcome: .failed, phase: failure.phase, reason: failure.reason))
                continue
            }
            guard let checksum = hashed.checksums[index] else { continue }
            // The first file holding the content takes the pipeline's line (taking it out of the map marks the
            // content seen); any later one is a duplicate.
            if let entry = byChecksum.removeValue(forKey: checksum) {
                body(ImportFileOutcome(path: file.relativePath, checksum: checksum, entry.outcome))
            } else {
                body(ImportFileOutcome(path: file.relativePath,
                                       outcome: hashedThisRun[index] ? .duplicate : .unchanged,
                                       checksum: checksum))
            }
        }
        // Unfinished items of earlier runs from other sources, finished (or not) by this one.
        for entry in pipeline.entries {
            guard let checksum = entry.checksum, byChecksum[checksum] != nil else { continue }
            body(ImportFileOutcome(path: entry.path, checksum: checksum, entry.outcome))
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

    private init(path: String, checksum: Checksum, _ outcome: FileOutcome) {
        switch outcome {
        case .imported: self.init(path: path, outcome: .imported, checksum: checksum)
        case .duplicate: self.init(path: path, outcome: .duplicate, checksum: checksum)
        case .skipped(let reason): self.init(path: path, outcome: .skipped, checksum: checksum, reason: FailureReason(reason))
        case .failed(let phase, let reason):
            self.init(path: path, outcome: .failed, checksum: checksum, phase: FailurePhase(phase),
                      reason: reason)
        case .unfinished(let lane):
            self.init(path: path, outcome: .unfinished, checksum: checksum, phase: FailurePhase(lane))
        case .archived: self.init(path: path, outcome: .archived, checksum: checksum)
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
