import CairnCore
import CairnStages
import Dispatch
import Foundation
import Glibc

/// SIGINT and SIGTERM for a long run: the first stops new work (in-flight work gets `deadline` to finish,
/// then is abandoned, left resumable; the walk and the hashing stop at their next folder or read) and the run
/// ends on its own, persisting and printing what was done; the second exits at once with 130 (everything
/// written so far is already durable).
///
///     let signals = SignalHandling.install(cancellation: options.cancellation) { name in
///         Output.error("\(name): stopping…")
///     }
///     defer { signals.uninstall() }
final class SignalHandling {
    static let handled: [Int32] = [SIGINT, SIGTERM]
    private let sources: [any DispatchSourceSignal]

    private init(sources: [any DispatchSourceSignal]) { self.sources = sources }

    /// Takes over SIGINT and SIGTERM; `onFirstSignal` gets the signal's name (`SIGINT`) once.
    static func install(cancellation: PipelineCancellation, deadline: Duration = PipelineCancellation.defaultDeadline,
                        onFirstSignal: @escaping @Sendable (String) -> Void = { _ in }) -> SignalHandling {
        let queue = DispatchQueue(label: "cairn.signals")
        let sources = handled.map { number in
            // The default action would kill the process before the source sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if cancellation.isCancelled {
                    Output.error("\(name(of: number)) again: exiting now; the next run resumes")
                    _exit(ExitStatus.interrupted.rawValue)
                }
                onFirstSignal(name(of: number))
                cancellation.cancel(deadline: deadline)
            }
            source.resume()
            return source
        }
        return SignalHandling(sources: sources)
    }

    /// Gives SIGINT and SIGTERM back their default action.
    func uninstall() {
        for source in sources { source.cancel() }
        for number in Self.handled { signal(number, SIG_DFL) }
    }

    static func name(of number: Int32) -> String {
        switch number {
        case SIGINT: return "SIGINT"
        case SIGTERM: return "SIGTERM"
        default: return "signal \(number)"
        }
    }
}
