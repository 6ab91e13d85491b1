import CCrashEvidence
import CairnCore
import Foundation
import Glibc

/// How the previous worker on this library died, and the same evidence armed for this one: a run that faults
/// (a decoder's SIGSEGV, an abort, a trap) leaves a line in `<library>/.crash-evidence` as it dies; a run killed
/// from outside, or one that ended, leaves the file empty. The crash-loop guard reads it before it recovers the
/// items left in flight, and only then is it emptied and armed again, so an interrupted start-up loses nothing.
public final class CrashEvidence: Sendable {
    private let descriptor: Int32
    public let path: String

    public init(layout: LibraryLayout) throws {
        path = layout.crashEvidencePath
        descriptor = try SystemCall.check(open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644), "open", path)
    }

    deinit {
        CCrashEvidence_disarm()
        close(descriptor)
    }

    /// The line the previous worker wrote as it faulted, or nil when it wrote none.
    public func recorded() throws -> String? {
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = try bytes.withUnsafeMutableBytes { buffer in
            try SystemCall.check(Int32(pread(descriptor, buffer.baseAddress, buffer.count, 0)), "read", path)
        }
        guard count > 0 else { return nil }
        let line = String(decoding: bytes[..<Int(count)], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return line.isEmpty ? nil : line
    }

    /// Forgets the previous worker's evidence (call once what it says is saved) and arms it for this run.
    public func clearAndArm() throws {
        _ = try SystemCall.check(ftruncate(descriptor, 0), "truncate", path)
        CCrashEvidence_arm(descriptor)
    }

    /// Crashes the process with a real SIGSEGV: the fault hook of the tests of a file that crashes the worker.
    public static func faultForTests() -> Never {
        CCrashEvidence_fault_for_tests()
        fatalError("unreachable: the fault did not stop the process")
    }
}
