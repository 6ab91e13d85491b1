import CairnCore
import CairnImmich
import CairnTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An upload whose body the server stops reading (a proxy that hung, a server stuck on its disk) fails by the
/// client's idle write timeout, as a timeout, and is retried like any connection problem: it never waits for the
/// upload's long deadline.
@Suite struct StalledUploadTests {
    /// A loopback port that completes TCP handshakes (the kernel's backlog) and never reads a byte.
    final class SilentListener {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.descriptor = descriptor
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(descriptor, 16) == 0 else {
                close(descriptor)
                throw CocoaError(.fileWriteUnknown)
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test(.timeLimit(.minutes(1)))
    func anUploadTheServerStopsReadingFailsAsATimeout() async throws {
        let listener = try SilentListener()
        let folder = try TemporaryDirectory()
        // Larger than every buffer between the two ends (both sockets' and the kernel's loopback queue).
        let path = folder.subpath("BIG.MP4")
        let bytes = Data(repeating: 0x5A, count: 96 << 20)
        try bytes.write(to: URL(fileURLWithPath: path))
        let client = ImmichClient(
            endpoint: try ImmichEndpoint("http://127.0.0.1:\(listener.port)"), key: try #require(ImmichAPIKey("stalled-key")),
            retry: RetryPolicy(attempts: 1),
            timeouts: .init(connect: .seconds(2), idleRead: .seconds(1), idleWrite: .seconds(1)))
        defer { Task { await client.close() } }
        let file = ImmichUploadFile(content: .file(path), byteCount: Int64(bytes.count), checksum: try #require(Checksum(hex: String(repeating: "ab", count: 20))),
                                    filename: "BIG.MP4", createdAt: "2024-01-01T00:00:00.000Z",
                                    modifiedAt: "2024-01-01T00:00:00.000Z")
        do {
            _ = try await client.upload(file)
            Issue.record("an upload to a server that reads nothing succeeded")
        } catch {
            #expect(error.category == .timeout, "\(error)")
            #expect(error.kind == .retryable)
            #expect(!error.description.contains("stalled-key"))
        }
        await client.close()
    }
}
