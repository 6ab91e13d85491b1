import CairnCore
import Foundation

/// One thing a run says about itself, with what it carries.
public enum NarrationEvent: Sendable, Equatable {
    case runStart(command: String)
    /// `detail`: what the phase works on (the source folder), when it says.
    case phaseStart(SyncPhase, detail: String?)
    case phaseEnd(SyncPhase, durationSeconds: Double, counts: RunCounts)
    case progress(SyncPhase, ProgressSnapshot, counts: RunCounts, lanes: [LaneOccupancy]?)
    /// A file hashed (throttled: a sample of them).
    case hashed(file: String)
    /// An item ready in the library (every one); `sha1`: its checksum, which names its thumbnail on the status page
    /// (`/thumbnails/<sha1>`), when the run knows it.
    case imported(file: String, sha1: String? = nil)
    /// A derived file made for the item `sha1` (`file` in its source): `role` is `thumbnail`, `preview` or `clip`.
    case derived(file: String, sha1: String, role: String)
    /// Checksums stamped "confirmed deleted" at the source.
    case stamped(confirmedDeleted: Int)
    /// The destination was checked against what cairn brought there (`DestinationDrift`).
    case destinationChecked(DestinationDrift)
    case note(String, phase: SyncPhase?)
    /// `file`: the file it is about, if any (one kept without preview).
    case warning(String, phase: SyncPhase?, file: String?)
    /// `file`: the file that failed, or nil for a run-level error; `category`: the file's failure's category.
    case error(String, phase: SyncPhase?, file: String?, category: FailureCategory? = nil)
    /// A tape build's news (its `event` names the stage: `tapeStarted`, `tapeClipReady`, …).
    case tape(TapeEvent)
    case runEnd(RunEnd)

    /// How a run ended: the last event of every run.
    public struct RunEnd: Sendable, Equatable {
        public var outcome: RunOutcome
        /// Why it did not succeed (nil on success).
        public var message: String?
        public var durationSeconds: Double?
        public var counts: RunCounts
        /// On a failure: whether credentials are needed to fix it.
        public var needsAuth: Bool?

        public init(outcome: RunOutcome, message: String? = nil, durationSeconds: Double? = nil, counts: RunCounts,
                    needsAuth: Bool? = nil) {
            self.outcome = outcome
            self.message = message
            self.durationSeconds = durationSeconds
            self.counts = counts
            self.needsAuth = needsAuth
        }

        /// NDJSON's `status` field: `success` when the run did its whole job, else `failed`.
        public var status: String { outcome == .success ? "success" : "failed" }
    }

    /// The event's name, as NDJSON's `event` field writes it.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case runStart, phaseStart, phaseEnd, progress
        case hashed, imported, derived, stamped, destinationChecked
        case note, warning, error
        case tapeStarted, tapeSegment, tapeClipReady, tapeClipSkipped, tapePlayable, tapeFinished
        case runEnd

        static func tape(_ stage: TapeEvent.Stage) -> Kind {
            switch stage {
            case .started: .tapeStarted
            case .segment: .tapeSegment
            case .clipReady: .tapeClipReady
            case .clipSkipped: .tapeClipSkipped
            case .playable: .tapePlayable
            case .finished: .tapeFinished
            }
        }
    }

    public var kind: Kind {
        switch self {
        case .runStart: .runStart
        case .phaseStart: .phaseStart
        case .phaseEnd: .phaseEnd
        case .progress: .progress
        case .hashed: .hashed
        case .imported: .imported
        case .derived: .derived
        case .stamped: .stamped
        case .destinationChecked: .destinationChecked
        case .note: .note
        case .warning: .warning
        case .error: .error
        case .tape(let news): .tape(news.stage)
        case .runEnd: .runEnd
        }
    }

    /// The phase the event belongs to, if any.
    public var phase: SyncPhase? {
        switch self {
        case .phaseStart(let phase, _), .phaseEnd(let phase, _, _), .progress(let phase, _, _, _): phase
        case .hashed: .hashing
        case .imported, .derived: .importing
        case .note(_, let phase), .warning(_, let phase, _), .error(_, let phase, _, _): phase
        case .runStart, .stamped, .destinationChecked, .tape, .runEnd: nil
        }
    }

    /// The human text it carries, if any.
    public var message: String? {
        switch self {
        case .phaseStart(_, let detail): detail
        case .note(let text, _), .warning(let text, _, _), .error(let text, _, _, _): text
        case .runEnd(let end): end.message
        case .runStart, .phaseEnd, .progress, .hashed, .imported, .derived, .stamped, .destinationChecked, .tape: nil
        }
    }

    /// The source file it is about, if any.
    public var file: String? {
        switch self {
        case .hashed(let file), .imported(let file, _), .derived(let file, _, _): file
        case .warning(_, _, let file), .error(_, _, let file, _): file
        default: nil
        }
    }

    /// The run's counters as of the event, on the events that carry them.
    public var counts: RunCounts? {
        switch self {
        case .phaseEnd(_, _, let counts), .progress(_, _, let counts, _): counts
        case .runEnd(let end): end.counts
        default: nil
        }
    }
}

/// What a check of the destination found: content cairn brought there that it no longer shows (drift), as the
/// catalog records it after the check, and what this run did about it.
public struct DestinationDrift: Sendable, Equatable, Codable {
    /// Which check ran: every asset, or only the destination's trash since the last check.
    public var check: DestinationCheckKind
    /// In the destination's own trash (deleted there by a person).
    public var trashed: Int
    /// Gone from the destination for good (its trash emptied, a purge, a file removed from the library folder).
    public var missing: Int
    /// Brought back from the destination's trash this run (`--destination-drift restore`).
    public var restored: Int
    /// Lost content a source still holds, brought in again this run (`--destination-drift restore`).
    public var broughtInAgain: Int
    /// Why nothing was brought back although asked (so much missing at once that the destination looks unmounted).
    public var mendingHeld: String?

    public init(check: DestinationCheckKind, trashed: Int = 0, missing: Int = 0, restored: Int = 0,
                broughtInAgain: Int = 0) {
        self.check = check
        self.trashed = trashed
        self.missing = missing
        self.restored = restored
        self.broughtInAgain = broughtInAgain
    }

    /// One line for people.
    public var description: String {
        let what = check == .full ? "checked every asset at the destination" : "checked the destination's trash"
        var parts: [String] = []
        if restored > 0 { parts.append("restored \(restored) from its trash") }
        if broughtInAgain > 0 { parts.append("bringing \(broughtInAgain) lost there in again") }
        if trashed > 0 { parts.append("\(trashed) deleted there (in its trash)") }
        if missing > 0 { parts.append("\(missing) gone from it for good") }
        guard !parts.isEmpty else { return what + ": nothing changed there" }
        if let mendingHeld { return what + ": " + parts.joined(separator: ", ") + "; held: " + mendingHeld }
        let left = trashed + missing > 0 ? "; left alone (`--destination-drift restore` brings back what a source still holds)" : ""
        return what + ": " + parts.joined(separator: ", ") + left
    }
}
