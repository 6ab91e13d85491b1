import ArgumentParser
import CairnNarration
import Foundation

/// How a narrated command shows its progress: chosen from the terminal unless a flag says otherwise.
struct NarrationOptions: ParsableArguments {
    @Flag(help: "Print events as NDJSON on stdout, one object per line, with stable field names (see README).")
    var json = false

    @Flag(help: "Print only errors and the final summary.")
    var quiet = false

    @Flag(help: "Print plain lines (no redrawing, no escape codes) even on a terminal.")
    var plain = false

    func validate() throws {
        if [json, quiet, plain].filter({ $0 }).count > 1 {
            throw ValidationError("Choose at most one of --json, --quiet and --plain.")
        }
    }

    var mode: NarrationOutputMode {
        if json { return .json }
        if quiet { return .quiet }
        if plain { return .plain }
        return .automatic
    }

    /// The renderer on stdout, and a ticker that keeps a live view's clock moving (cancel it when done).
    static func makeRenderer(mode: NarrationOutputMode) -> (renderer: any NarrationHandler, ticker: Task<Void, Never>?) {
        let renderer = NarrationOutput.renderer(mode: mode)
        let ticker = (renderer as? TerminalRenderer)?.startTicking()
        return (renderer, ticker)
    }

    /// Whether the detailed end-of-run summary goes to stdout (never in the middle of NDJSON).
    var printsSummary: Bool { !json && !quiet }
}
