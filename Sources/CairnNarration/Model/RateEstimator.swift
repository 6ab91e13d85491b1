import Foundation

/// A smoothed rate (units per second) from cumulative counts sampled over time.
///
/// Samples closer than `minimumSampleInterval` are folded into the next one, so bursts do not swing the rate;
/// the rate counts as stable once `samplesUntilStable` intervals have been measured.
public struct RateEstimator: Sendable, Equatable {
    public var minimumSampleInterval: TimeInterval = 1
    public var samplesUntilStable = 3
    /// Weight of the newest interval in the moving average.
    public var smoothing = 0.3

    private var lastTime: Date?
    private var lastUnits: Double = 0
    public private(set) var rate: Double?
    public private(set) var sampleCount = 0

    public init() {}

    public mutating func record(units: Double, at time: Date) {
        guard let lastTime else {
            self.lastTime = time
            lastUnits = units
            return
        }
        let span = time.timeIntervalSince(lastTime)
        guard span >= minimumSampleInterval else { return }
        let instant = max(0, units - lastUnits) / span
        rate = rate.map { $0 + smoothing * (instant - $0) } ?? instant
        sampleCount += 1
        self.lastTime = time
        lastUnits = units
    }

    public var isStable: Bool { sampleCount >= samplesUntilStable && (rate ?? 0) > 0 }

    /// Seconds left for `remaining` units at the smoothed rate; nil until stable.
    public func secondsLeft(for remaining: Double) -> Double? {
        guard isStable, let rate, rate > 0 else { return nil }
        return max(0, remaining) / rate
    }
}
