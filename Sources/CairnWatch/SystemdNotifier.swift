import CairnCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol (`Type=notify`): datagrams of `KEY=value` lines to `$NOTIFY_SOCKET`.
/// Without the variable (not run by systemd) it is nil and nothing is sent.
public struct SystemdNotifier: Sendable {
    public let socketPath: String

    public init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return nil }
        socketPath = path
    }

    /// How often to send `WATCHDOG=1`: half of `WatchdogSec` (`$WATCHDOG_USEC`), when it is meant for this process.
    public static func watchdogInterval(environment: [String: String] = ProcessInfo.processInfo.environment) -> Double? {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Double(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"].flatMap(Int32.init), pid != getpid() { return nil }
        return microseconds / 2_000_000
    }

    public func ready(status: String) throws(SystemCallError) { try send("READY=1\nSTATUS=\(status)") }
    public func status(_ text: String) throws(SystemCallError) { try send("STATUS=\(text)") }
    public func watchdog() throws(SystemCallError) { try send("WATCHDOG=1") }
    public func stopping() throws(SystemCallError) { try send("STOPPING=1") }

    /// One datagram. A path starting with `@` is in the abstract namespace.
    public func send(_ message: String) throws(SystemCallError) {
        let descriptor = try SystemCall.check(socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0),
                                             "socket", socketPath)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var path = Array(socketPath.utf8)
        if path.first == UInt8(ascii: "@") { path[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.count < capacity else { throw SystemCallError("sendto", path: socketPath, code: .fileNameTooLong) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: path) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count)
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { buffer in
                    sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
        try SystemCall.check(Int32(truncatingIfNeeded: sent), "sendto", socketPath)
    }
}
