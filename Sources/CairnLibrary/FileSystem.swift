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
                throw SystemCallError(link ? "mkdir (a symbolic link in the library is refused)" : "mkdir", path: path, code: ENOTDIR)
            }
            return
        }
        let parent = parentDirectory(of: path)
        if parent != path, !parent.isEmpty { try makeDirectories(parent, followingLinks: followingLinks) }
        if mkdir(path, 0o755) != 0, errno != EEXIST { throw SystemCallError("mkdir", path: path) }
    }

    /// Flushes a folder's entries, so a rename or a new file inside it survives a power cut.
    package static func syncDirectory(_ path: String) throws(SystemCallError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open", path: path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemCallError("fsync", path: path) }
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
        guard renameat(fromFolder, baseName(of: from), toFolder, baseName(of: to)) == 0 else {
            throw SystemCallError("rename", path: to)
        }
        guard !syncingFolder || fsync(toFolder) == 0 else { throw SystemCallError("fsync", path: parentDirectory(of: to)) }
    }

    private static func openFolderWithoutLinks(_ path: String) throws(SystemCallError) -> Int32 {
        let fd = CLinux_open_directory_no_symlinks(path)
        guard fd >= 0 else {
            let code = errno
            throw SystemCallError(code == ELOOP || code == ENOTDIR ? "open (a symbolic link in the library is refused)" : "open",
                                  path: path, code: code)
        }
        return fd
    }

    package static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    package static func size(_ path: String) -> Int64? {
        var info = stat()
        return lstat(path, &info) == 0 ? Int64(info.st_size) : nil
    }

    package static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Resolves links and `..` in an existing path.
    package static func resolved(_ path: String) -> String? {
        guard let pointer = realpath(path, nil) else { return nil }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
