import CairnCore
import Foundation

/// What `cairn status` says: the headline, the last run's timeline, counts, failures and what waits for review.
public struct StatusReport: Codable, Sendable, Equatable {
    /// The newest run, finished or not; nil when the library never ran.
    public var lastRun: RunSummary?
    /// When the newest successful run ended (maybe older than `lastRun`).
    public var lastSuccessfulSync: Date?
    /// Originals in the library whose probe or derivatives are still to be made (archived with
    /// `--derivatives off`, or left by a stopped run); nil when not counted.
    public var awaitingDerivatives: Int?
    /// Content cairn brought to the destination that the last checks found deleted there; nil when never checked.
    public var drift: DriftStatus?
    /// Whether a run holds the library now; a run that has just started may not be in the catalog yet, so the
    /// newest run recorded can be an older, finished one.
    public var runInProgress: Bool?
    /// Failures listed in the text form; the rest are counted.
    public static let listedFailures = 10

    public static let unfinishedRunMessage = "the run stopped before finishing (killed or crashed); the next run resumes"

    /// - Parameter isRunning: whether a cairn process holds the library lock now. A last run that never ended
    ///   while nothing runs was killed or crashed; pass `false` and it is reported as failed, not as syncing.
    public init(lastRun: RunSummary?, lastSuccessfulSync: Date?, isRunning: Bool? = nil) {
        var lastRun = lastRun
        if isRunning == false, let run = lastRun, run.status == .syncing || run.status == .idle {
            lastRun?.status = .failed(message: Self.unfinishedRunMessage, needsAuth: false)
            lastRun?.endedAt = run.endedAt ?? run.timeline.map { $0.startedAt.addingTimeInterval($0.durationSeconds ?? 0) }.max()
        }
        self.lastRun = lastRun
        self.lastSuccessfulSync = lastSuccessfulSync ?? (lastRun?.status.outcome == .success ? lastRun?.endedAt : nil)
        runInProgress = isRunning
    }

    /// `syncing` while a run holds the library, else the newest run's state.
    public var state: String {
        if runInProgress == true { return RunStatus.syncing.name }
        return lastRun?.status.name ?? "idle"
    }

    /// "Up to date · last synced 4 min ago", "Last sync failed 2 h ago: …", "Syncing · started 1 min ago", "Never synced".
    public func headline(now: Date) -> String {
        let recorded = recordedHeadline(now: now)
        if runInProgress == true, let run = lastRun, run.status != .syncing, run.status != .idle {
            return "Syncing now · before this run: " + recorded
        }
        return recorded
    }

    private func recordedHeadline(now: Date) -> String {
        guard let run = lastRun else {
            return lastSuccessfulSync.map { "Up to date · last synced \(NarrationFormat.relative($0, now: now))" }
                ?? "Never synced"
        }
        switch run.status {
        case .idle, .syncing:
            return "Syncing · started \(NarrationFormat.relative(run.startedAt, now: now))"
        case .ended(.success, _, _):
            let when = lastSuccessfulSync ?? run.endedAt ?? run.startedAt
            let failed = run.counts.failed > 0 ? " · \(NarrationFormat.count(run.counts.failed)) failed" : ""
            return "Up to date · last synced \(NarrationFormat.relative(when, now: now))" + failed
        case .ended(_, let message, let needsAuth):
            let when = run.endedAt ?? run.startedAt
            return "Last sync failed \(NarrationFormat.relative(when, now: now)): \(message ?? "failed")"
                + (needsAuth ? " (credentials needed)" : "")
        }
    }

    /// The full text, ending in a newline.
    public func text(now: Date, utcOffset: UTCOffset = .local) -> String {
        var lines = [headline(now: now)]
        guard let run = lastRun else { return lines.joined(separator: "\n") + "\n" }
        if let outcome = run.status.outcome, outcome != .success, let success = lastSuccessfulSync {
            lines.append("Last successful sync \(NarrationFormat.relative(success, now: now))"
                         + " (\(NarrationFormat.dateTime(success, utcOffset: utcOffset)))")
        }
        var runLine = "Last run \(run.runID)"
        if let command = run.command { runLine += " (\(command))" }
        runLine += " · started \(NarrationFormat.dateTime(run.startedAt, utcOffset: utcOffset))"
        if let duration = run.durationSeconds { runLine += " · took \(NarrationFormat.duration(duration))" }
        lines.append(runLine)

        if !run.timeline.isEmpty {
            lines.append("")
            lines.append("Timeline")
            for entry in run.timeline {
                let mark = entry.isOpen ? "●" : "✓"
                let duration = entry.durationSeconds.map(NarrationFormat.duration) ?? "running"
                let name = entry.phase.displayName
                lines.append("  \(mark) \(name)\(String(repeating: " ", count: max(1, 17 - name.count)))\(duration)")
            }
        }
        lines.append("")
        lines.append("Counts")
        lines.append("  " + NarrationFormat.countsLine(run.counts))
        if let drift, drift.trashed + drift.missing > 0 {
            lines.append("  " + drift.description)
        }
        if let waiting = awaitingDerivatives, waiting > 0 {
            lines.append("  \(NarrationFormat.count(waiting)) original\(waiting == 1 ? "" : "s") in the library await"
                         + " \(waiting == 1 ? "its" : "their") previews: the next import or sync without --derivatives off makes them")
        }

        if !run.failures.isEmpty || run.counts.failed > 0 {
            lines.append("")
            lines.append("Failed files (\(NarrationFormat.count(max(run.counts.failed, run.failures.count))))")
            for failure in run.failures.prefix(Self.listedFailures) {
                lines.append("  \(failure.path): \(failure.reason)")
            }
            let unlisted = max(run.counts.failed, run.failures.count) - min(run.failures.count, Self.listedFailures)
            if unlisted > 0 { lines.append("  … and \(NarrationFormat.count(unlisted)) more") }
        }
        if let review = run.review {
            lines.append("")
            lines.append("Review")
            lines.append("  \(NarrationFormat.count(review.pendingCount)) waiting for review"
                         + " · \(NarrationFormat.count(review.quarantinedCount)) held by quarantine")
            if let eligible = review.nextQuarantineEligibility {
                lines.append("  next quarantined item eligible for trash \(NarrationFormat.relative(eligible, now: now))"
                             + " (\(NarrationFormat.dateTime(eligible, utcOffset: utcOffset)))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `cairn status --json`: `{"headline", "state", "lastSuccessfulSync", "lastRun": RunSummary}`.
    public func json(now: Date) -> String {
        let document = Document(
            headline: headline(now: now), state: state,
            lastSuccessfulSync: lastSuccessfulSync, lastRun: lastRun)
        let data = (try? NarrationJSON.encoder(pretty: true).encode(document)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    struct Document: Codable {
        var headline: String
        var state: String
        var lastSuccessfulSync: Date?
        var lastRun: RunSummary?
    }
}

/// What the checks of the destination found deleted there of what cairn brought there, as the catalog keeps it.
public struct DriftStatus: Codable, Sendable, Equatable {
    /// In the destination's own trash.
    public var trashed: Int
    /// Gone from the destination for good.
    public var missing: Int
    /// When every asset was last checked.
    public var lastFullCheck: Date?

    public init(trashed: Int, missing: Int, lastFullCheck: Date?) {
        self.trashed = trashed
        self.missing = missing
        self.lastFullCheck = lastFullCheck
    }

    public var description: String {
        var parts: [String] = []
        if trashed > 0 { parts.append("\(NarrationFormat.count(trashed)) in its trash") }
        if missing > 0 { parts.append("\(NarrationFormat.count(missing)) gone from it for good") }
        return "deleted at the destination since cairn brought them there: " + parts.joined(separator: ", ")
            + " (left alone; `cairn sync --destination-drift restore` brings back what a source still holds)"
    }
}
