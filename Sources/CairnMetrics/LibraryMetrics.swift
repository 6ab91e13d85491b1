import CairnCore
import CairnNarration
import Foundation

/// Everything cairn exports about one library and source, as plain values: the run's recorder fills it from the
/// narration as the run goes, `cairn serve` from the catalog. `MetricsExposition` renders it; the count of series
/// it yields depends on phases, lanes and kinds, never on how many files the library holds.
public struct LibraryMetrics: Sendable, Equatable {
    /// The `library` label: the library's name (its folder's name unless configured).
    public var library: String
    /// The `source` label: the source's name (its folder's name unless configured).
    public var source: String
    /// The newest run, finished or not: its timeline, counts and status.
    public var lastRun: RunSummary?
    /// How the newest run ended.
    public var lastRunOutcome: ExitStatus?
    /// When the newest successful (or partial) run ended; nil when none did. From the catalog's run history.
    public var lastSuccess: Date?
    /// The newest runs in a row that neither succeeded nor partly succeeded.
    public var failedRunsInARow = 0
    public var runInProgress = false
    public var bytesTransferred: Int64 = 0
    /// File failures of the last run by phase and bounded reason.
    public var failures: [FailureKey: Int] = [:]
    /// Lane occupancy while the run's lanes work.
    public var lanes: [LaneOccupancy] = []
    public var reconcile: ReconcileMetrics?
    /// Content cairn brought to the destination and found deleted there, by state (`trashed`, `missing`); empty
    /// when the destination was never checked.
    public var destinationDrift: [String: Int] = [:]
    public var sourceHealth: SourceHealth?
    /// What the library holds, by kind.
    public var libraryContent: [MediaKind: ContentTally] = [:]
    /// What the last run added to the library, by kind.
    public var importedByLastRun: [MediaKind: ContentTally] = [:]

    public init(library: String, source: String) {
        self.library = library
        self.source = source
    }

    /// The start of the run's current phase (the newest open one), while it runs.
    public var currentPhaseStartedAt: Date? {
        guard runInProgress else { return nil }
        return lastRun?.timeline.filter(\.isOpen).map(\.startedAt).max()
    }
}

/// Items and bytes.
public struct ContentTally: Sendable, Equatable {
    public var items: Int
    public var bytes: Int64

    public init(items: Int, bytes: Int64) { self.items = items; self.bytes = bytes }
}

/// A failure's phase and its bounded reason: the labels of `cairn_failures_total`.
public struct FailureKey: Hashable, Sendable {
    public var phase: String
    public var reason: FailureCategory

    public init(phase: String, reason: FailureCategory) { self.phase = phase; self.reason = reason }
}

/// What reconciliation holds at a source, by state (`cairn_reconcile_candidates{state}`).
public struct ReconcileMetrics: Sendable, Equatable {
    /// Eligible or approved: the next sync with deletions applied trashes these.
    public var trashNow = 0
    public var pendingReview = 0
    public var heldByQuarantine = 0
    public var heldByRail = 0
    /// Over the run's cap on deletions; the next run takes them.
    public var deferred = 0
    /// When the oldest item waiting for review was confirmed deleted at the source.
    public var oldestPendingSince: Date?
    public var quarantineSeconds: Double?

    public init() {}
}

/// How the source looked to the last sync's safety rails (`cairn_source_health{state}`).
public enum SourceHealth: String, Sendable, CaseIterable {
    case mounted
    /// Missing, not a folder, or its `.cairn-source` marker lost: most likely an unmounted disk.
    case vanished
    case empty
    case mostlyGone = "mostly_gone"
    /// Reading the source failed for many files.
    case unreadable
}

/// How a run ended, as `cairn_last_run_outcome{outcome}` labels it: the process's exit status, in the label
/// values the exposition publishes.
extension ExitStatus {
    /// Every value of the `outcome` label, once each, in the order the exposition writes them.
    public static let metricLabels: [String] = allCases.reduce(into: []) { labels, status in
        if !labels.contains(status.metricLabel) { labels.append(status.metricLabel) }
    }

    public var metricLabel: String {
        switch self {
        case .success: return "success"
        case .someFilesFailed: return "partial"
        case .failure, .usage, .deletionsHeldBySafetyRail: return "failed"
        case .libraryLocked: return "locked"
        case .needsAuth: return "needs_auth"
        case .interrupted: return "interrupted"
        }
    }

    /// Whether a run that ended so counts as a success for `cairn_last_success_timestamp_seconds`.
    public var succeeded: Bool { self == .success || self == .someFilesFailed }
}
