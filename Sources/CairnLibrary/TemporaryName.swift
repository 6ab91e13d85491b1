import CairnCore
import Glibc
import Synchronization

/// Unique names in the library's `tmp/` (in the shard of their final folder, `LibraryLayout.temporaryDirectory(forFinal:)`)
/// for files on their way to a final path; the final name's extension is kept, so a leftover in `tmp/` still says
/// what it was.
package enum TemporaryName {
    private static let sequence = Atomic<UInt64>(0)

    package static func make(in layout: LibraryLayout, for finalRelativePath: String) -> String {
        let last = FileSystem.baseName(of: finalRelativePath)
        let name = last.isEmpty ? "derived" : last
        let token = Self.token()
        let folder = shard(layout.temporaryDirectory(forFinal: finalRelativePath))
        if let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) {
            return folder + "/\(name[..<dot]).\(token).partial\(name[dot...])"
        }
        return folder + "/\(name).\(token).partial"
    }

    /// A name part no other file of this host takes: the process and a count.
    package static func token() -> String { "\(getpid())-\(sequence.add(1, ordering: .relaxed).newValue)" }

    /// Shards made or found since a library was last opened for writing: cairn never removes one
    /// (`removeLeftoverTemporaryFiles` keeps them), so each is looked at once, not three times a file.
    private static let shardsKnown = Locked<Set<String>>([])

    /// Forgets the shards known: a library opened anew may be one made again where another was removed.
    package static func forgetShards() {
        shardsKnown.withLock { $0.removeAll() }
    }

    /// `folder`, made when missing (a failure shows when the file is created there, naming it).
    package static func shard(_ folder: String) -> String {
        if shardsKnown.withLock({ $0.contains(folder) }) { return folder }
        if (try? FileSystem.makeDirectories(folder)) != nil { _ = shardsKnown.withLock { $0.insert(folder) } }
        return folder
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
