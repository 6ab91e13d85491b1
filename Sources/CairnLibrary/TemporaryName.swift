import CairnCore
import Glibc
import Synchronization

/// Unique names in the library's `tmp/` for files on their way to a final path; the final name's
/// extension is kept, so a leftover in `tmp/` still says what it was.
package enum TemporaryName {
    private static let sequence = Atomic<UInt64>(0)

    package static func make(in layout: LibraryLayout, for finalRelativePath: String) -> String {
        let name = finalRelativePath.split(separator: "/").last.map(String.init) ?? "derived"
        let token = "\(getpid())-\(sequence.add(1, ordering: .relaxed).newValue)"
        if let dot = name.lastIndex(of: ".") {
            return layout.temporaryDirectory + "/\(name[..<dot]).\(token).partial\(name[dot...])"
        }
        return layout.temporaryDirectory + "/\(name).\(token).partial"
    }
}

extension FileSystem {
    /// Flushes a file's bytes to disk.
    package static func syncFile(_ path: String) throws(SystemCallError) {
        let fd = try SystemCall.result { open(path, O_RDONLY | O_CLOEXEC) }.get("open", path)
        defer { close(fd) }
        try SystemCall.result { fsync(fd) }.get("fsync", path)
    }
}
