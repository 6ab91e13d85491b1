import ArgumentParser
import CairnCore
import Foundation

/// Plain writes to stdout and stderr, unbuffered, for commands that are not narrated.
enum Output {
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("cairn: " + text + "\n").utf8))
    }

    /// Writes `text` as `error(_:)` does; the exit to throw, with its documented code.
    static func fail(_ text: String, _ status: ExitStatus = .failure) -> ExitCode {
        error(text)
        return ExitCode(status.rawValue)
    }
}
