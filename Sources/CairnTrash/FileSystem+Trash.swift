import CairnCore
import CairnLibrary
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The few file-system moves the trash needs, each durable on return, on the library's one file-system helper.
extension FileSystem {
    enum Kind: Equatable {
        case missing
        case regular
        case directory
        /// A symlink, socket, device...: never followed, never moved.
        case other
    }

    /// What is at `path` itself (symlinks are not followed).
    static func kind(_ path: String) throws -> Kind {
        var info = stat()
        switch SystemCall.result({ lstat(path, &info) }) {
        case .success: break
        case .failure(.noSuchFileOrDirectory), .failure(.notDirectory): return .missing
        case .failure(let code): throw SystemCallError("lstat", path: path, code: code)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// Creates `relative` (and its parents) under `root`, syncing each parent that gained an entry.
    /// Every existing component must be a real directory: a symlink anywhere is refused.
    static func makeDirectories(_ relative: String, under root: String) throws {
        var current = root
        for component in relative.split(separator: "/") {
            let next = current + "/" + component
            switch try kind(next) {
            case .directory:
                break
            case .missing:
                switch SystemCall.result({ mkdir(next, 0o755) }) {
                case .success, .failure(.fileExists): break
                case .failure(let code): throw SystemCallError("mkdir", path: next, code: code)
                }
                guard try kind(next) == .directory else { throw DeletionError(next, "is not a real directory") }
                try syncDirectory(current)
            case .regular, .other:
                throw DeletionError(next, "is not a real directory (a file or a symlink is in the way)")
            }
            current = next
        }
    }

    /// Whether no folder between `root` and `relative`'s parent is a symlink or a non-directory.
    /// A missing folder is fine: nothing can be reached through it.
    static func noSymlinkOnTheWay(_ relative: String, under root: String) throws -> Bool {
        var current = root
        for component in relative.split(separator: "/").dropLast() {
            current += "/" + component
            switch try kind(current) {
            case .directory: continue
            case .missing: return true
            case .regular, .other: return false
            }
        }
        return true
    }

    /// Renames `from` to `to` (both under `root`, given relative to it, no symbolic link on the way), creating
    /// `to`'s parents, then syncs both parent directories so the move survives a crash.
    static func moveDurably(from: String, to: String, under root: String) throws {
        let toParent = RelativePath.folder(of: to), fromParent = RelativePath.folder(of: from)
        try makeDirectories(toParent, under: root)
        try renameDurably(root + "/" + from, to: root + "/" + to)
        if fromParent != toParent { try syncDirectory(fromParent.isEmpty ? root : root + "/" + fromParent) }
    }

    /// Whether two regular files hold the same bytes (sizes first, then 1 MiB chunks).
    static func sameBytes(_ a: String, _ b: String) throws -> Bool {
        guard let left = FileHandle(forReadingAtPath: a) else { throw DeletionError(a, "cannot be opened for reading") }
        guard let right = FileHandle(forReadingAtPath: b) else { throw DeletionError(b, "cannot be opened for reading") }
        defer {
            try? left.close()
            try? right.close()
        }
        guard try left.seekToEnd() == right.seekToEnd() else { return false }
        try left.seek(toOffset: 0)
        try right.seek(toOffset: 0)
        while true {
            let chunkA = try left.read(upToCount: 1 << 20) ?? Data()
            let chunkB = try right.read(upToCount: 1 << 20) ?? Data()
            guard chunkA == chunkB else { return false }
            if chunkA.isEmpty { return true }
        }
    }
}
