/// How often and how patiently a failed try is tried again: capped exponential backoff with jitter, a server's
/// `Retry-After` honoured (up to a cap, so a misconfigured proxy cannot park a run for hours). The one backoff of
/// the servers' clients (Immich's, S3's) and of the lanes' phases.
public struct RetryPolicy: Hashable, Sendable {
    /// Tries in all, the first included.
    public var attempts: Int
    public var base: Duration
    public var cap: Duration
    public var retryAfterCap: Duration
    /// The share of the capped delay a pause lasts, drawn in this range: `0...1` (full jitter) spreads the clients of
    /// one server apart; `1...1.2` (the lanes') keeps the doubling plain.
    public var jitter: ClosedRange<Double>

    public init(attempts: Int = 6, base: Duration = .milliseconds(250), cap: Duration = .seconds(20),
                retryAfterCap: Duration = .seconds(120), jitter: ClosedRange<Double> = 0...1) {
        self.attempts = max(1, attempts)
        self.base = base
        self.cap = cap
        self.retryAfterCap = retryAfterCap
        self.jitter = jitter
    }

    /// The pause before try `attempt + 1` (after `attempt` tries failed), from a uniform draw in 0...1, in whole
    /// milliseconds (persisted and logged delays stay readable, and tests exact).
    public func delay(after attempt: Int, retryAfter: Duration? = nil, draw: Double) -> Duration {
        if let retryAfter { return min(retryAfter, retryAfterCap) }
        let exponent = min(max(attempt - 1, 0), 30)
        let share = jitter.lowerBound + (jitter.upperBound - jitter.lowerBound) * min(max(draw, 0), 1)
        let delay = min(base * (1 << exponent), cap) * share
        return .milliseconds(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)
    }
}
