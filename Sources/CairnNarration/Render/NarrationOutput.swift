import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How a command shows its narration: `--json`, `--quiet`, `--plain`, `--live`, or chosen from the terminal.
public enum NarrationOutputMode: String, Sendable, CaseIterable {
    case automatic, live, plain, json, quiet

    /// `automatic` becomes `live` on a terminal (unless `TERM=dumb`) and `plain` otherwise.
    public func resolved(isTerminal: Bool, environment: [String: String]) -> NarrationOutputMode {
        guard self == .automatic else { return self }
        return isTerminal && environment["TERM"] != "dumb" ? .live : .plain
    }
}

/// Builds the renderer for a mode.
public enum NarrationOutput {
    /// The renderer for `mode` writing to `descriptor` (stdout by default).
    /// The live view honours `NO_COLOR`; call its `startTicking()` to keep the elapsed time moving.
    public static func renderer(
        mode: NarrationOutputMode, descriptor: Int32 = STDOUT_FILENO,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> any NarrationHandler {
        let sink = FileDescriptorSink(descriptor: descriptor)
        switch mode.resolved(isTerminal: Terminal.isTerminal(descriptor), environment: environment) {
        case .live, .automatic:
            return TerminalRenderer(
                descriptor: descriptor,
                options: .init(colors: Terminal.colorsAllowed(environment: environment)))
        case .plain: return PlainRenderer(sink: sink)
        case .quiet: return PlainRenderer(sink: sink, verbosity: .quiet)
        case .json: return JSONLinesRenderer(sink: sink)
        }
    }
}
