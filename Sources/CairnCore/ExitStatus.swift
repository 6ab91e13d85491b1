/// Documented process exit codes, shared by every command so scripts and cron can branch on them.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Everything asked for was done.
    case success = 0
    /// An unexpected error stopped the command (message on stderr).
    case failure = 1
    /// The command line was wrong (ArgumentParser's own code).
    case usage = 64
    /// The run finished, but some files failed; each has a reason in the report.
    case someFilesFailed = 3
    /// A safety rail held every deletion (source missing, empty or mostly gone).
    case deletionsHeldBySafetyRail = 4
    /// Another cairn process holds this library's lock; nothing was done.
    case libraryLocked = 75
    /// The Immich server refused the API key (401/403): nothing was lost; fix the key and run again to resume.
    case needsAuth = 77
    /// SIGINT or SIGTERM stopped the run; what was done is kept and the next run resumes.
    case interrupted = 130

    public var summary: String {
        switch self {
        case .success: return "success"
        case .failure: return "an unexpected error stopped the command"
        case .usage: return "the command line was wrong"
        case .someFilesFailed: return "the run finished but some files failed"
        case .deletionsHeldBySafetyRail: return "a safety rail held every deletion"
        case .libraryLocked: return "another cairn process holds the library lock"
        case .needsAuth: return "the Immich server refused the API key; the next run resumes"
        case .interrupted: return "interrupted by a signal; the next run resumes"
        }
    }
}
