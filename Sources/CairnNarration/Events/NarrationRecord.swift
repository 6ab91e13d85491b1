import CairnCore
import Foundation

/// One event of a run, stamped: the unit every renderer, the run log and `--json` work from.
///
/// ## NDJSON fields (stable; `cairn import --json`, `cairn sync --json` and `<library>/runs/<run-id>.ndjson`)
/// One JSON object per line. Fields that do not apply to an event are left out, never `null`.
///
/// | field        | type            | present on                          | meaning |
/// |--------------|-----------------|-------------------------------------|---------|
/// | `event`      | string          | every event                         | `runStart`, `phaseStart`, `phaseEnd`, `progress`, `hashed`, `imported`, `derived`, `stamped`, `destinationChecked`, `note`, `warning`, `error`, `tapeStarted`, `tapeSegment`, `tapeClipReady`, `tapeClipSkipped`, `tapePlayable`, `tapeFinished`, `runEnd` |
/// | `seq`        | integer         | every event                         | 1, 2, 3, … within a run, in emission order |
/// | `time`       | string          | every event                         | ISO 8601 UTC with milliseconds, `2026-11-22T03:20:15.123Z` |
/// | `runId`      | string          | every event                         | the run's id (also the run log's file name) |
/// | `command`    | string          | `runStart`                          | `import`, `sync`, … |
/// | `phase`      | string          | `phaseStart`, `phaseEnd`, `progress`, `hashed`, `imported`, `derived`; `note`, `warning`, `error` in a phase | `preparing`, `hashing`, `reconciling`, `importing`, `finalizing` |
/// | `message`    | string          | `note`, `warning`, `error`, `phaseStart` (its detail), `runEnd` (failure) | human text, one line |
/// | `file`       | string          | `hashed`, `imported`, `derived`, `warning` or `error` about a file | source path of the file concerned |
/// | `sha1`       | string          | `imported` (when the run knows it), `derived` | the item's checksum (40 hex digits): `cairn serve` shows its thumbnail at `/thumbnails/<sha1>` |
/// | `role`       | string          | `derived`                           | `thumbnail`, `preview` or `clip` |
/// | `count`      | integer         | `stamped` (checksums confirmed deleted) | |
/// | `durationSeconds` | number     | `phaseEnd`, `runEnd`                | wall time of the phase / run |
/// | `progress`   | object          | `progress`                          | see below |
/// | `counts`     | object          | `progress`, `phaseEnd`, `runEnd`    | see below |
/// | `lanes`      | array           | `progress` while lanes run          | `[{"name","busy","width","queued","holding"}]`; `holding`: the files in flight there |
/// | `status`     | string          | `runEnd`                            | `success` or `failed` (anything but `success` in `outcome`) |
/// | `outcome`    | string          | `runEnd`                            | how the run ended (`RunOutcome`): `success`, `someFailed`, `stoppedAtErrorLimit`, `interrupted`, `held`, `failed` |
/// | `needsAuth`  | boolean         | `runEnd` when failed                | the failure needs credentials to be fixed |
/// | `category`   | string          | `error` about a file                | the failure's category (`FailureCategory`): `timeout`, `crash`, `permission`, `not_found`, `no_space`, `io`, `unsupported`, `corrupt`, `memory`, `server`, `network`, `auth`, `other` |
///
/// `progress`: `completed`, `total` (absent while indeterminate), `bytesCompleted`, `bytesTotal` (absent while
/// unknown), `fraction` (0…1, absent while indeterminate; never decreases within a phase),
/// `itemsPerSecond`, `bytesPerSecond` (absent until measured), `etaSeconds` (absent until the rate is stable).
///
/// A tape build's events carry `TapeEvent`'s fields: `tape`, `clips`, `toMake`, `playlist` (`tapeStarted`); `clip`,
/// `segment`, `durationSeconds`, `tapeSeconds` (`tapeSegment`); `clip`, `path`, `how`, `clipsReady`, `clips`
/// (`tapeClipReady`); `clip`, `path`, `reason`, `cutShort` (`tapeClipSkipped`); `clipsReady`, `clips`, `tapeSeconds`
/// (`tapePlayable`); `tape`, `clips`, `encoded`, `reused`, `skipped`, `tapeSeconds`, `playlist`, `movie`
/// (`tapeFinished`).
///
/// `counts`: `filesSeen`, `bytesSeen`, `toHash`, `bytesToHash`, `hashed`, `bytesHashed`, `new`, `duplicates`,
/// `ready`, `failed`, `skipped`, `confirmedDeleted`, `keptWithoutPreview`, `retries`.
public struct NarrationRecord: Codable, Sendable, Equatable {
    public var seq: Int
    public var time: Date
    public var runID: String
    public var event: NarrationEvent

    public init(_ event: NarrationEvent, seq: Int = 0, time: Date, runID: String = "") {
        self.event = event
        self.seq = seq
        self.time = time
        self.runID = runID
    }

    public var kind: NarrationEvent.Kind { event.kind }
    public var phase: SyncPhase? { event.phase }

    enum CodingKeys: String, CodingKey {
        case kind = "event", seq, time, runID = "runId", command, phase, message, file
        case count, durationSeconds, progress, counts, lanes, status, outcome, needsAuth, category, drift, sha1, role
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event.kind, forKey: .kind)
        try container.encode(seq, forKey: .seq)
        try container.encode(time, forKey: .time)
        try container.encode(runID, forKey: .runID)
        try container.encodeIfPresent(event.phase, forKey: .phase)
        try container.encodeIfPresent(event.message, forKey: .message)
        try container.encodeIfPresent(event.file, forKey: .file)
        try container.encodeIfPresent(event.counts, forKey: .counts)
        switch event {
        case .runStart(let command): try container.encode(command, forKey: .command)
        case .phaseEnd(_, let duration, _): try container.encode(duration, forKey: .durationSeconds)
        case .progress(_, let snapshot, _, let lanes):
            try container.encode(snapshot, forKey: .progress)
            try container.encodeIfPresent(lanes, forKey: .lanes)
        case .stamped(let count): try container.encode(count, forKey: .count)
        case .destinationChecked(let drift): try container.encode(drift, forKey: .drift)
        case .runEnd(let end):
            try container.encodeIfPresent(end.durationSeconds, forKey: .durationSeconds)
            try container.encode(end.status, forKey: .status)
            try container.encode(end.outcome, forKey: .outcome)
            try container.encodeIfPresent(end.needsAuth, forKey: .needsAuth)
        case .error(_, _, _, let category): try container.encodeIfPresent(category, forKey: .category)
        case .imported(_, let sha1): try container.encodeIfPresent(sha1, forKey: .sha1)
        case .derived(_, let sha1, let role):
            try container.encode(sha1, forKey: .sha1)
            try container.encode(role, forKey: .role)
        case .tape(let news): try news.encode(to: encoder)
        case .phaseStart, .hashed, .note, .warning: break
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(Int.self, forKey: .seq)
        time = try container.decode(Date.self, forKey: .time)
        runID = try container.decode(String.self, forKey: .runID)
        func optional<T: Decodable>(_ key: CodingKeys) throws -> T? { try container.decodeIfPresent(T.self, forKey: key) }
        func required<T: Decodable>(_ key: CodingKeys) throws -> T { try container.decode(T.self, forKey: key) }
        func tape(_ stage: TapeEvent.Stage) throws -> NarrationEvent { .tape(try TapeEvent(stage: stage, from: decoder)) }
        switch try container.decode(NarrationEvent.Kind.self, forKey: .kind) {
        case .runStart: event = .runStart(command: try required(.command))
        case .phaseStart: event = .phaseStart(try required(.phase), detail: try optional(.message))
        case .phaseEnd:
            event = .phaseEnd(try required(.phase), durationSeconds: try required(.durationSeconds),
                              counts: try required(.counts))
        case .progress:
            event = .progress(try required(.phase), try required(.progress), counts: try required(.counts),
                              lanes: try optional(.lanes))
        case .hashed: event = .hashed(file: try required(.file))
        case .imported: event = .imported(file: try required(.file), sha1: try optional(.sha1))
        case .derived: event = .derived(file: try required(.file), sha1: try required(.sha1), role: try required(.role))
        case .stamped: event = .stamped(confirmedDeleted: try required(.count))
        case .destinationChecked: event = .destinationChecked(try required(.drift))
        case .note: event = .note(try required(.message), phase: try optional(.phase))
        case .warning: event = .warning(try required(.message), phase: try optional(.phase), file: try optional(.file))
        case .error:
            event = .error(try required(.message), phase: try optional(.phase), file: try optional(.file),
                           category: try optional(.category))
        case .runEnd:
            // Logs written before `outcome` existed say only `success` or `failed`.
            let outcome: RunOutcome = try optional(.outcome)
                ?? (try required(.status) as String == "success" ? .success : .failed)
            event = .runEnd(NarrationEvent.RunEnd(
                outcome: outcome, message: try optional(.message),
                durationSeconds: try optional(.durationSeconds), counts: try required(.counts),
                needsAuth: try optional(.needsAuth)))
        case .tapeStarted: event = try tape(.started)
        case .tapeSegment: event = try tape(.segment)
        case .tapeClipReady: event = try tape(.clipReady)
        case .tapeClipSkipped: event = try tape(.clipSkipped)
        case .tapePlayable: event = try tape(.playable)
        case .tapeFinished: event = try tape(.finished)
        }
    }
}
