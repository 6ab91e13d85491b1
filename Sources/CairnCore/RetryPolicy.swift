/// How often and how patiently a retryable request is tried again: capped exponential backoff with full jitter,
/// a server's `Retry-After` honoured (up to a cap, so a misconfigured proxy cannot park a run for hours).
public struct RetryPolicy: Sendable {
    /// Tries in all, the first included.
    public var attempts: Int
    public var base: Duration
    public var cap: Duration
    public var retryAfterCap: Duration

    public init(attempts: Int = 6, base: Duration = .milliseconds(250), cap: Duration = .seconds(20),
                retryAfterCap: Duration = .seconds(120)) {
        self.attempts = max(1, attempts)
        self.base = base
        self.cap = cap
        self.retryAfterCap = retryAfterCap
    }

    /// The pause before try `attempt + 1` (after `attempt` tries failed), from a uniform draw in 0...1.
    public func delay(after attempt: Int, retryAfter: Duration?, draw: Double) -> Duration {
        if let retryAfter { return min(retryAfter, retryAfterCap) }
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(base * (1 << exponent), cap)
        return ceiling * min(max(draw, 0), 1)
    }
}
