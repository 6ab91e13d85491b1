import CairnCore
import CairnNarration

/// The files a command's narration reported failed, in its earlier tries and in the one under way: a run started
/// again after its catalog lost its working tables does not report again what an earlier try failed, and its
/// exit must still say it.
final class FailedFiles: NarrationHandler {
    private let paths = Locked((earlier: Set<String>(), current: Set<String>()))

    /// A new try begins: what the last one failed becomes earlier.
    func beginTry() { paths.withLock { $0 = ($0.earlier.union($0.current), []) } }

    /// Files an earlier try failed that this one did not report again.
    var failedOnlyEarlier: Int { paths.withLock { $0.earlier.subtracting($0.current).count } }

    /// The command's exit for a last try that ended with `status`: files an earlier try failed make a success
    /// `someFilesFailed`; also how many there were.
    func settled(_ status: ExitStatus) -> (status: ExitStatus, failedEarlier: Int) {
        let failedEarlier = status == .success ? failedOnlyEarlier : 0
        return (failedEarlier > 0 ? .someFilesFailed : status, failedEarlier)
    }

    /// The summary's line for the files only an earlier try failed.
    static func summaryLine(_ count: Int) -> String { "  failed       \(count) in the try before this one (above)" }

    func handle(_ record: NarrationRecord) {
        if case .error(_, _, let file?, _) = record.event { paths.withLock { _ = $0.current.insert(file) } }
    }
}
