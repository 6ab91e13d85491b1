import CairnCore
import Foundation

/// Progress of one phase: indeterminate until a total is known, then a fraction that is clamped to 1 and
/// never goes backwards, with a rate and, once the rate is stable, an ETA.
///
/// Bytes weigh more than item counts when both totals are known (one 4 GB video is not one thumbnail).
public struct ProgressTracker: Sendable, Equatable {
    public let phase: SyncPhase
    public private(set) var completed = 0
    public private(set) var total: Int?
    public private(set) var bytesCompleted: Int64 = 0
    public private(set) var bytesTotal: Int64?
    private var highestFraction: Double = 0
    /// `finish()` was called: the phase is done (a phase that runs again starts a fresh tracker).
    public private(set) var isFinished = false
    private var itemRate = RateEstimator()
    private var byteRate = RateEstimator()

    public init(phase: SyncPhase) { self.phase = phase }

    /// The total became known (or changed): progress is determinate from now on.
    public mutating func setTotal(items: Int, bytes: Int64? = nil) {
        total = max(0, items)
        if let bytes { bytesTotal = max(0, bytes) }
    }

    public mutating func advance(items: Int = 1, bytes: Int64 = 0) {
        completed += max(0, items)
        bytesCompleted += max(0, bytes)
    }

    /// The phase finished: whatever the counts say, it is done.
    public mutating func finish() {
        if let total { completed = max(completed, total) }
        if let bytesTotal { bytesCompleted = max(bytesCompleted, bytesTotal) }
        highestFraction = 1
        isFinished = true
    }

    /// 0…1 from the counts alone (not yet held monotonic); nil while indeterminate.
    public var rawFraction: Double? {
        if let bytesTotal, bytesTotal > 0 {
            return min(1, Double(bytesCompleted) / Double(bytesTotal))
        }
        guard let total else { return nil }
        guard total > 0 else { return 1 }
        return min(1, Double(completed) / Double(total))
    }

    /// Records a rate sample at `time` and describes the progress. Fractions returned never decrease.
    public mutating func snapshot(at time: Date) -> ProgressSnapshot {
        itemRate.record(units: Double(completed), at: time)
        byteRate.record(units: Double(bytesCompleted), at: time)
        var fraction: Double?
        if let raw = rawFraction {
            highestFraction = max(highestFraction, raw)
            fraction = highestFraction
        }
        return ProgressSnapshot(
            completed: completed, total: total, bytesCompleted: bytesCompleted, bytesTotal: bytesTotal,
            fraction: fraction, itemsPerSecond: itemRate.rate, bytesPerSecond: byteRate.rate,
            etaSeconds: eta)
    }

    /// Seconds left, from the bytes when their total is known, else the items; nil until the rate is stable.
    public var eta: Double? {
        if highestFraction >= 1 { return rawFraction == nil ? nil : 0 }
        if let bytesTotal, bytesTotal > 0 {
            return byteRate.secondsLeft(for: Double(bytesTotal - bytesCompleted))
        }
        guard let total else { return nil }
        return itemRate.secondsLeft(for: Double(total - completed))
    }
}
