import CairnCore
import Glibc

/// The few durable file-system steps cairn builds on: mkdir -p, rename into place, fsync a folder.
enum FileSystem {
    /// Creates `path` and missing parents (mode 0755).
    static func makeDirectories(_ path: String) throws(SystemCallError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw SystemCallError("mkdir", path: path, code: ENOTDIR) }
            return
        }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent) }
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw SystemCallError("mkdir", path: path) }
    }

    /// Flushes a folder's entries, so a rename or a new file inside it survives a power cut.
    static func syncDirectory(_ path: String) throws(SystemCallError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", path: path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemCallError("fsync", path: path) }
    }

    /// Renames `from` to `to` (same file system) and makes the rename durable.
    static func renameDurably(_ from: String, to: String) throws(SystemCallError) {
        guard rename(from, to) == 0 else { throw SystemCallError("rename", path: to) }
        try syncDirectory(parentDirectory(of: to))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Resolves links and `..` in an existing path.
    static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
