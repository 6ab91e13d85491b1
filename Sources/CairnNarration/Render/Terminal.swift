import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Facts about the terminal (if any) behind a file descriptor.
public enum Terminal {
    public static func isTerminal(_ descriptor: Int32) -> Bool { isatty(descriptor) == 1 }

    /// Columns of the terminal behind `descriptor`, or nil when it is not one (or does not say).
    public static func columns(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Rows of the terminal behind `descriptor`, or nil when it is not one (or does not say).
    public static func rows(of descriptor: Int32) -> Int? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }

    /// Colour unless `NO_COLOR` is set to anything non-empty (no-color.org) or the terminal is `dumb`.
    public static func colorsAllowed(environment: [String: String]) -> Bool {
        if let value = environment["NO_COLOR"], !value.isEmpty { return false }
        return environment["TERM"] != "dumb"
    }
}

/// SGR styles for the live view; rendered as nothing when colours are off.
enum TerminalStyle: String {
    case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", cyan = "36"

    func apply(_ text: String, colors: Bool) -> String {
        colors ? "\u{1B}[\(rawValue)m\(text)\u{1B}[0m" : text
    }
}

/// The cursor and erase sequences the live view uses (VT100 / ECMA-48).
enum ControlSequence {
    static let hideCursor = "\u{1B}[?25l"
    static let showCursor = "\u{1B}[?25h"
    /// Erase from the cursor to the end of the screen.
    static let eraseBelow = "\u{1B}[J"
    /// Back to column 1, `lines` lines up.
    static func moveUp(_ lines: Int) -> String { lines > 0 ? "\r\u{1B}[\(lines)A" : "\r" }
}
