import CairnCore
import Foundation

/// One thing a run says about itself: the unit every renderer, the run log and `--json` work from.
///
/// ## NDJSON fields (stable; `cairn import --json`, `cairn sync --json` and `<library>/runs/<run-id>.ndjson`)
/// One JSON object per line. Fields that do not apply to an event are left out, never `null`.
///
/// | field        | type            | present on                          | meaning |
/// |--------------|-----------------|-------------------------------------|---------|
/// | `event`      | string          | every event                         | `runStart`, `phaseStart`, `phaseEnd`, `progress`, `hashed`, `fetched`, `imported`, `stamped`, `note`, `warning`, `error`, `runEnd` |
/// | `seq`        | integer         | every event                         | 1, 2, 3, … within a run, in emission order |
/// | `time`       | string          | every event                         | ISO 8601 UTC with milliseconds, `2026-11-22T03:20:15.123Z` |
/// | `runId`      | string          | every event                         | the run's id (also the run log's file name) |
/// | `command`    | string          | `runStart`                          | `import`, `sync`, … |
/// | `phase`      | string          | `phaseStart`, `phaseEnd`, `progress`, `hashed`, `imported` | `preparing`, `fetchingServer`, `hashing`, `reconciling`, `importing`, `finalizing` |
/// | `message`    | string          | `note`, `warning`, `error`, `fetched`, `stamped`, `runEnd` (failure) | human text, one line |
/// | `file`       | string          | `hashed`, `imported`, `error` about a file | source path of the file concerned |
/// | `page`, `pageCount` | integer  | `fetched`                           | page n of m (`pageCount` absent while unknown) |
/// | `count`      | integer         | `fetched` (items on the page), `stamped` (checksums confirmed deleted) | |
/// | `durationSeconds` | number     | `phaseEnd`, `runEnd`                | wall time of the phase / run |
/// | `progress`   | object          | `progress`                          | see below |
/// | `counts`     | object          | `progress`, `phaseEnd`, `runEnd`    | see below |
/// | `lanes`      | array           | `progress` while lanes run          | `[{"name","busy","width","queued"}]` |
/// | `status`     | string          | `runEnd`                            | `success` or `failed` |
/// | `needsAuth`  | boolean         | `runEnd` when failed                | the failure needs credentials to be fixed |
///
/// `progress`: `completed`, `total` (absent while indeterminate), `bytesCompleted`, `bytesTotal` (absent while
/// unknown), `fraction` (0…1, absent while indeterminate; never decreases within a phase),
/// `itemsPerSecond`, `bytesPerSecond` (absent until measured), `etaSeconds` (absent until the rate is stable).
///
/// `counts`: `filesSeen`, `bytesSeen`, `toHash`, `bytesToHash`, `hashed`, `bytesHashed`, `new`, `duplicates`,
/// `ready`, `failed`, `skipped`, `confirmedDeleted`, `keptWithoutPreview`, `retries`.
public struct NarrationEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case runStart, phaseStart, phaseEnd, progress
        case hashed, fetched, imported, stamped
        case note, warning, error
        case runEnd
    }

    public var kind: Kind
    public var seq: Int
    public var time: Date
    public var runID: String
    public var command: String?
    public var phase: SyncPhase?
    public var message: String?
    public var file: String?
    public var page: Int?
    public var pageCount: Int?
    public var count: Int?
    public var durationSeconds: Double?
    public var progress: ProgressSnapshot?
    public var counts: RunCounts?
    public var lanes: [LaneOccupancy]?
    public var status: RunOutcome?
    public var needsAuth: Bool?

    public init(
        kind: Kind, seq: Int = 0, time: Date, runID: String = "", command: String? = nil,
        phase: SyncPhase? = nil, message: String? = nil, file: String? = nil,
        page: Int? = nil, pageCount: Int? = nil, count: Int? = nil, durationSeconds: Double? = nil,
        progress: ProgressSnapshot? = nil, counts: RunCounts? = nil, lanes: [LaneOccupancy]? = nil,
        status: RunOutcome? = nil, needsAuth: Bool? = nil
    ) {
        self.kind = kind; self.seq = seq; self.time = time; self.runID = runID; self.command = command
        self.phase = phase; self.message = message; self.file = file
        self.page = page; self.pageCount = pageCount; self.count = count; self.durationSeconds = durationSeconds
        self.progress = progress; self.counts = counts; self.lanes = lanes
        self.status = status; self.needsAuth = needsAuth
    }

    enum CodingKeys: String, CodingKey {
        case kind = "event", seq, time, runID = "runId", command, phase, message, file
        case page, pageCount, count, durationSeconds, progress, counts, lanes, status, needsAuth
    }
}

/// How a finished run ended, as the `status` field of `runEnd`.
public enum RunOutcome: String, Codable, Sendable {
    case success
    case failed
}
