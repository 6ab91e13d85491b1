import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal for tests: renderers write to `slave` as to a real terminal; the test reads `master`.
public final class PseudoTerminal {
    public let master: Int32
    public private(set) var slave: Int32

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(columns: UInt16, rows: UInt16 = 24) throws {
        var master: Int32 = -1, slave: Int32 = -1
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        guard openpty(&master, &slave, nil, nil, &size) == 0 else {
            throw Failure(description: "openpty: \(String(cString: strerror(errno)))")
        }
        // Raw mode: the master then sees exactly the bytes written (no "\n" -> "\r\n").
        var attributes = termios()
        tcgetattr(slave, &attributes)
        cfmakeraw(&attributes)
        tcsetattr(slave, TCSANOW, &attributes)
        self.master = master
        self.slave = slave
    }

    /// Reads what the slave side wrote until `marker` arrives (or `timeoutMilliseconds` pass without data).
    public func read(until marker: String, timeoutMilliseconds: Int32 = 5_000) -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: bytes, as: UTF8.self).contains(marker) {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeoutMilliseconds) > 0 else { break }
            let count = Glibc.read(master, &chunk, chunk.count)
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads everything a child process writes until it exits (every slave descriptor closed), or until
    /// `timeoutMilliseconds` pass without data. Closes this side's slave first, since a terminal reports
    /// the end only once no one holds the slave open: call it after the child has started.
    public func readUntilChildCloses(timeoutMilliseconds: Int32 = 60_000) -> String {
        if slave >= 0 {
            close(slave)
            slave = -1
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, timeoutMilliseconds) > 0 else { break }
            let count = Glibc.read(master, &chunk, chunk.count)
            // Linux answers EIO once the last slave descriptor is closed and the buffer is drained.
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    deinit {
        if slave >= 0 { close(slave) }
        close(master)
    }
}

extension String {
    /// The text with CSI escape sequences removed: what a person sees.
    public var withoutEscapes: String {
        replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "")
    }
}
