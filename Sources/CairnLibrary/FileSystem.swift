import CLinux
import CairnCore
import Glibc

/// The few durable file-system steps cairn builds on: mkdir -p, rename into place, fsync a folder.
package enum FileSystem {
    /// Creates `path` and missing parents (mode 0755). Inside the library (`followingLinks: false`) a symbolic
    /// link where a folder should be is an error, never followed: nothing is created outside the library.
    package static func makeDirectories(_ path: String, followingLinks: Bool = false) throws(SystemCallError) {
        var info = stat()
        if (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                let link = (info.st_mode & S_IFMT) == S_IFLNK
                throw SystemCallError(link ? "mkdir (a symbolic link in the library is refused)" : "mkdir", path: path,
                                      code: .notDirectory)
            }
            return
        }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, followingLinks: followingLinks) }
        switch SystemCall.result({ mkdir(path, 0o755) }) {
        case .success, .failure(.fileExists): return
        case .failure(let code): throw SystemCallError("mkdir", path: path, code: code)
        }
    }

    /// Flushes a folder's entries, so a rename or a new file inside it survives a power cut.
    package static func syncDirectory(_ path: String) throws(SystemCallError) {
        let fd = try SystemCall.result { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", path)
        defer { close(fd) }
        try SystemCall.result { fsync(fd) }.get("fsync", path)
    }

    /// Renames `from` to `to` (same file system, both in the library) and makes the rename durable. Both folders
    /// are opened with no symbolic link along their paths and the rename is made relative to them: a folder
    /// swapped for a link before or during the step cannot send the file outside the library.
    package static func renameDurably(_ from: String, to: String) throws(SystemCallError) {
        try rename(from, to: to, syncingFolder: true)
    }

    /// The same rename; `syncingFolder` false leaves the folder's durability to a group commit.
    package static func rename(_ from: String, to: String, syncingFolder: Bool) throws(SystemCallError) {
        let fromFolder = try openFolderWithoutLinks(parentDirectory(of: from))
        defer { close(fromFolder) }
        let toFolder = try openFolderWithoutLinks(parentDirectory(of: to))
        defer { close(toFolder) }
        try SystemCall.result { renameat(fromFolder, baseName(of: from), toFolder, baseName(of: to)) }.get("rename", to)
        if syncingFolder { try SystemCall.result { fsync(toFolder) }.get("fsync", parentDirectory(of: to)) }
    }

    private static func openFolderWithoutLinks(_ path: String) throws(SystemCallError) -> Int32 {
        switch SystemCall.result({ CLinux_open_directory_no_symlinks(path) }) {
        case .success(let fd): return fd
        case .failure(let code):
            let refused = code == .tooManySymbolicLinkLevels || code == .notDirectory
            throw SystemCallError(refused ? "open (a symbolic link in the library is refused)" : "open", path: path, code: code)
        }
    }

    /// The last component of `path`. Paths are split on the byte `/`, as the kernel splits them, not on the
    /// character (a `/` followed by a combining mark is one character), and a byte search costs far less.
    package static func baseName(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    package static func size(_ path: String) -> Int64? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    /// All of `path` before its last component (split as `baseName` splits).
    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Resolves links and `..` in an existing path.
    package static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
