import CairnCore

/// Keeps one poisonous file from crash-looping the worker, without blaming files that merely stood near a death.
/// Pure: records in, records out.
///
/// "In flight" in the store is a mark, not proof of work: a phase's mark is committed ahead of its work, and its
/// clearing rides the next group commit, so many items read as in flight at any moment. A death therefore counts
/// against an item in two grades of evidence:
/// - `.crashed`: the worker recorded a fault signal (a decoder's SIGSEGV, an abort) as it died. Every item in
///   flight becomes a *suspect*, which the scheduler runs alone, after every other item; a suspect that was running
///   alone when the worker crashed is the culprit and fails for good.
/// - `.killed`: nothing was recorded (SIGKILL, the OOM killer, a reboot, a cron timeout). That says nothing about
///   any file, so the items simply resume; only an item in flight at `killsBeforeSuspicion` deaths in a row runs
///   alone, and only one that was running alone at `killsBeforeFailure` deaths in a row fails (a file that
///   exhausts memory every time is killed, not crashed).
/// Both counts reset whenever one of the item's phases returns. Recovery is applied to the store in one
/// transaction before any work, so a death is counted once however often start-up is interrupted.
public enum CrashLoopGuard {
    public static let reason = FailureReason("crashed the worker while it ran alone (`--retry-failed` tries it again)",
                                             category: .crash)
    public static let killsBeforeSuspicion = 3
    public static let killsBeforeFailure = 5

    /// What the worker knows of how the previous one died.
    public enum Death: Sendable, Equatable {
        /// A fault signal was recorded as it died.
        case crashed
        /// No fault was recorded: killed from outside, or the machine stopped.
        case killed
    }

    /// The record as this run should see it, or nil when it needs no change.
    public static func recover(_ record: ItemRecord, after death: Death) -> ItemRecord? {
        guard record.inFlight else { return nil }
        var recovered = record
        recovered.inFlight = false
        recovered.runsAlone = false
        let culprit: Bool
        switch death {
        case .crashed:
            recovered.crashCount += 1
            culprit = record.runsAlone
        case .killed:
            recovered.killCount += 1
            culprit = record.runsAlone && recovered.killCount >= killsBeforeFailure
        }
        if culprit, let lane = record.state.resumeLane {
            recovered.state = .failed(ItemFailure(phase: lane, reason: reason,
                                                  attempts: recovered.crashCount + recovered.killCount,
                                                  retryable: false))
        }
        return recovered
    }

    /// Every record as this run should see it, and the ones that changed (to persist before any work).
    public static func recover(_ records: [ItemRecord], after death: Death) -> (records: [ItemRecord], changed: [ItemRecord]) {
        var all = [ItemRecord]()
        all.reserveCapacity(records.count)
        var changed = [ItemRecord]()
        for record in records {
            if let recovered = recover(record, after: death) {
                all.append(recovered)
                changed.append(recovered)
            } else {
                all.append(record)
            }
        }
        return (all, changed)
    }

    /// Whether the scheduler should run this item alone, after all others.
    public static func isSuspect(_ record: ItemRecord) -> Bool {
        (record.crashCount > 0 || record.killCount >= killsBeforeSuspicion) && !record.state.isTerminal
    }

    /// Whether the guard failed this record for good (a later run leaves it failed unless asked to retry it): failed
    /// for good with crash counts still set, as the catalog's planning tells it too (every other end of a phase
    /// clears them).
    public static func failedIt(_ record: ItemRecord) -> Bool {
        guard let failure = record.state.failure else { return false }
        return !failure.retryable && (record.crashCount > 0 || record.killCount > 0)
    }
}
