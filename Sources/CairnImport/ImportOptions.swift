import CairnCatalog
import CairnCore
import CairnPipeline
import CairnScanner
import CairnStages
import Foundation

/// What a person asked an import to do.
public struct ImportOptions: Sendable {
    public var source: String
    /// How many files to hash at once; nil chooses per page (`ImportRun.hashWorkers`).
    public var hashWorkers: Int?
    /// Lane widths, inboxes, timeouts, clips on/off, attempts and the error limit of the importing phase.
    public var pipeline = PipelineConfiguration.defaults(cores: System.coreCount)
    /// Cancels the importing phase (a signal handler holds it); a cancel before it starts makes it start stopped.
    public var cancellation = PipelineCancellation()
    /// Keep every file's outcome in the summary (for `--report`). Off, only their counts are kept: a huge
    /// source would otherwise hold a line per file at the end of the run.
    public var keepsOutcomes = false
    /// `--retry-failed`: files the crash-loop guard failed for good go through the lanes again.
    public var retryFailed = false
    /// `--archives`: whether the walk reads the archives in the source in place.
    public var archives = ArchiveHandling.ignore
    /// What the run leaves out of its new content (`--exclude`, `--kind`, `--since`, `--until`, Google Photos'
    /// trash unless `--include-trashed`).
    public var filter = ImportFilter()
    /// `--tag`: tags for the run's new assets (in the catalog, and at a destination that has tags).
    public var tags: [String] = []
    /// `--session-tag`: the run's new assets also get `cairn/import/<its start, local time>`.
    public var sessionTag = false
    /// `--stacks`: a RAW and its JPEG, and a burst's frames, become stacks (in the catalog and at the destination).
    public var stacks = true
    /// Where new content goes (`--destination`): the library itself unless an Immich server is named.
    package var destination: any ImportDestination = LibraryDestination()

    public init(source: String) { self.source = source }
}

/// The files a run kept without preview, filled from several threads.
final class KeptWithoutPreviewList: Sendable {
    private let files = Locked<[ImportFailure]>([])

    /// Adds a file once (a later phase may find the same file unrenderable); returns whether it was new.
    func append(_ file: ImportFailure) -> Bool {
        files.withLock { files in
            guard !files.contains(where: { $0.relativePath == file.relativePath }) else { return false }
            files.append(file)
            return true
        }
    }
    var all: [ImportFailure] { files.withLock { $0 } }
}

/// What an import did.
public struct ImportSummary: Sendable {
    public var runID: String
    public var sourceRoot: String
    public var counts: RunCounts
    public var failures: [ImportFailure]
    public var symlinksSkipped: [String]
    public var otherFiles: Int
    public var junkSkipped: Int
    public var scanIssues: [ScanIssue]
    public var temporaryFilesRemoved: Int
    public var elapsedSeconds: Double
    /// How the run ended, as its catalog record says (`interrupted` and `stoppedAtErrorLimit` leave items that
    /// resume next run).
    public var outcome: RunOutcome
    /// Every file's outcome, in path order (for `--report`); empty unless `ImportOptions.keepsOutcomes`.
    public var outcomes: [FileOutcomeEntry] = []
    /// Items the run stopped before finishing (interrupted, or at the error limit); they resume next run.
    public var unfinished = 0
    /// Files kept byte-identical without a preview, each with its reason; they count as imported, not failed.
    public var keptWithoutPreview: [ImportFailure] = []
    /// The destination refused the credentials (the server's words): the run stopped, nothing lost.
    public var credentialsRefused: String?
    /// New files held back on purpose (`ImportFilter`), by what the summary counts them as; counted among the
    /// skipped.
    public var heldBack: [String: Int] = [:]
    /// The archived items' thumbnails and clips were left to the queue's workers (`--no-wait`), not switched off.
    public var derivativesLeftToWorkers = false

    public var exitStatus: ExitStatus {
        if credentialsRefused != nil { return .needsAuth }
        switch outcome {
        case .interrupted: return .interrupted
        case .stoppedAtErrorLimit: return .someFilesFailed
        default: return failures.isEmpty && scanIssues.isEmpty ? .success : .someFilesFailed
        }
    }
}

/// Points a test can hook into between phases.
public struct ImportHooks: Sendable {
    /// After the walk, before anything is read (a test pulls a file away here).
    public var afterScan: @Sendable (ScanReport) -> Void = { _ in }
    public init() {}
}
