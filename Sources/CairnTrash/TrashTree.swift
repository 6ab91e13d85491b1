import CairnCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Walks and removes folders inside the trash through directory descriptors, never following a
/// symlink: a link planted in the trash is removed as a link, and nothing outside is ever reached.
enum TrashTree {
    /// A directory opened without following symlinks; closed on deinit.
    final class Directory {
        let descriptor: Int32
        let path: String

        init(at name: String, in parent: Int32, path: String) throws {
            self.path = path
            descriptor = try SystemCall.check(openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), "openat", path)
        }

        init(path: String) throws {
            self.path = path
            descriptor = try SystemCall.check(open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), "open", path)
        }

        deinit { close(descriptor) }

        /// Entry names, without "." and "..", sorted.
        func names() throws -> [String] {
            let copy = try SystemCall.result { dup(descriptor) }.get("dup", path)
            let opened = SystemCall.pointer { fdopendir(copy) }
            if case .failure = opened { close(copy) }
            let stream = try opened.get("fdopendir", path)
            defer { closedir(stream) }
            rewinddir(stream)
            var names: [String] = []
            while let entry = readdir(stream) {
                let name = withUnsafePointer(to: entry.pointee.d_name) {
                    $0.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                        String(cString: $0)
                    }
                }
                if name != "." && name != ".." { names.append(name) }
            }
            return names.sorted()
        }

        func isDirectory(_ name: String) throws -> Bool {
            var info = stat()
            try SystemCall.check(fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW), "fstatat", path + "/" + name)
            return info.st_mode & S_IFMT == S_IFDIR
        }
    }

    /// Paths of every non-directory below `directory`, relative to it, sorted.
    static func files(in directory: Directory, prefix: String = "") throws -> [String] {
        var result: [String] = []
        for name in try directory.names() {
            if try directory.isDirectory(name) {
                let child = try Directory(at: name, in: directory.descriptor, path: directory.path + "/" + name)
                result += try files(in: child, prefix: prefix + name + "/")
            } else {
                result.append(prefix + name)
            }
        }
        return result
    }

    /// Removes `name` (a folder) below `parent`, depth first. Returns how many non-folders it removed.
    @discardableResult
    static func remove(_ name: String, in parent: Directory) throws -> Int {
        let directory = try Directory(at: name, in: parent.descriptor, path: parent.path + "/" + name)
        var removed = 0
        for child in try directory.names() {
            if try directory.isDirectory(child) {
                removed += try remove(child, in: directory)
            } else {
                try SystemCall.check(unlinkat(directory.descriptor, child, 0), "unlinkat", directory.path + "/" + child)
                removed += 1
            }
        }
        try SystemCall.check(unlinkat(parent.descriptor, name, AT_REMOVEDIR), "rmdir", directory.path)
        return removed
    }
}
