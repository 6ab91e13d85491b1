import CairnCore

/// Keeps one poisonous file from crash-looping the worker. Pure: records in, records out.
///
/// On start, every record still in flight was being worked on when the previous worker died: its
/// `crashCount` goes up and it is no longer in flight. At `limit` it fails for good with `reason`.
/// Below the limit the scheduler runs it as a *suspect*: alone, after every other item, so a
/// second death while it is in flight is strong evidence against it and not bad luck.
public enum CrashLoopGuard {
    public static let reason: FailureReason = "worker crashed while processing this file"
    public static let limit = 2

    /// The record as this run should see it, or nil when it needs no change.
    public static func recover(_ record: ItemRecord) -> ItemRecord? {
        guard record.inFlight else { return nil }
        var recovered = record
        recovered.inFlight = false
        recovered.crashCount += 1
        if recovered.crashCount >= limit, let lane = record.state.resumeLane {
            recovered.state = .failed(ItemFailure(phase: lane, reason: reason, attempts: recovered.crashCount,
                                                  retryable: false))
        }
        return recovered
    }

    /// Every record as this run should see it, and the ones that changed (to persist before any work).
    public static func recover(_ records: [ItemRecord]) -> (records: [ItemRecord], changed: [ItemRecord]) {
        var all = [ItemRecord]()
        all.reserveCapacity(records.count)
        var changed = [ItemRecord]()
        for record in records {
            if let recovered = recover(record) {
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
        record.crashCount > 0 && !record.state.isTerminal
    }
}
