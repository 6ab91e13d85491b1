/// How a run ended: the one type for it. The scheduler returns it, the `run` table keeps it, `runEnd` events and
/// `cairn status` carry it, and the exit status and metrics follow from it.
public enum RunOutcome: String, Codable, Sendable, CaseIterable {
    /// Started and not ended (or killed before it could say).
    case running
    case success
    /// Some files failed or could not be read; the rest is done.
    case someFailed
    /// A signal stopped it; the next run resumes.
    case interrupted
    /// `--max-errors` failures: no new work was taken; what was not done resumes next run.
    case stoppedAtErrorLimit
    /// A sync's safety rail held its deletions.
    case held
    /// It stopped on an error before its end.
    case failed
}

extension RunOutcome {
    /// The exit status a run that ended so exits with (`running`: none yet, so a failure).
    public var exitStatus: ExitStatus {
        switch self {
        case .success: return .success
        case .someFailed, .stoppedAtErrorLimit: return .someFilesFailed
        case .interrupted: return .interrupted
        case .held: return .deletionsHeldBySafetyRail
        case .running, .failed: return .failure
        }
    }
}
