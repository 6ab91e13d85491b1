import CairnCore
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Watches a folder tree with inotify: every folder gets a watch, folders created or moved in later get theirs
/// as they appear, and what happens to files (created, written, moved, deleted) is reported as "changed".
/// Changes to cairn's own marker files in the source (`.cairn*`) are not changes: a sync writes one.
///
/// One work item on a queue of its own reads the descriptor with `poll` (a quarter second at a time, so it sees the
/// watcher go) and closes it when done: no Dispatch source holds the descriptor's number, which a source cancelled
/// and closed elsewhere in the process could otherwise leave registered to a reused number.
public final class TreeWatcher: Sendable {
    public enum Event: Sendable, Equatable {
        case changed
        /// The kernel's queue overflowed, or a folder could not be watched: a full sync finds what changed.
        case overflowed(String?)
    }

    public var root: String { tree.root }
    private let tree: InotifyTree

    /// Starts watching `root` and everything under it; `onEvent` is called on a queue of the watcher's own.
    public init(root: String, onEvent: @escaping @Sendable (Event) -> Void) throws(SystemCallError) {
        let tree = try InotifyTree(root: root)
        self.tree = tree
        if let failure = tree.addTree(root) { onEvent(.overflowed(failure)) }
        DispatchQueue(label: "cairn.watch").async { tree.readUntilStopped(onEvent) }
    }

    deinit { tree.stop() }

    /// How many folders have a watch.
    public var watchedFolders: Int { tree.watchedFolders }

    /// Watches the tree again when the source's own folder lost its watch (unmounted, or moved away and back):
    /// inotify does not follow a mount. Returns whether it did.
    @discardableResult
    public func rewatchIfNeeded(onEvent: @Sendable (Event) -> Void) -> Bool { tree.rewatchIfNeeded(onEvent: onEvent) }
}

/// The inotify descriptor and the folders it watches.
final class InotifyTree: Sendable {
    typealias Event = TreeWatcher.Event

    let root: String
    private let descriptor: Int32
    private let state = Locked(State())
    private let stopped = Locked(false)
    private static let folderMask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO
                                           | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) | UInt32(IN_EXCL_UNLINK)

    private struct State {
        var folders: [Int32: String] = [:]
        var limitReported = false
    }

    init(root: String) throws(SystemCallError) {
        self.root = root
        descriptor = try SystemCall.check(inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)), "inotify_init1", root)
    }

    func stop() { stopped.withLock { $0 = true } }

    /// Reads events until `stop()`, then closes the descriptor.
    func readUntilStopped(_ onEvent: @Sendable (Event) -> Void) {
        while !stopped.withLock({ $0 }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 250) > 0 { drain(onEvent) }
        }
        close(descriptor)
    }

    /// How many folders have a watch.
    var watchedFolders: Int { state.withLock { $0.folders.count } }

    func rewatchIfNeeded(onEvent: @Sendable (Event) -> Void) -> Bool {
        guard !state.withLock({ $0.folders.values.contains(root) }) else { return false }
        var info = stat()
        guard stat(root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return false }
        if let failure = addTree(root) { onEvent(.overflowed(failure)) }
        return true
    }

    /// Adds watches for `top` and the folders below it; returns why a folder could not be watched, if one could not.
    func addTree(_ top: String) -> String? {
        var pending = [top]
        var failure: String?
        while let folder = pending.popLast() {
            let added = SystemCall.result { inotify_add_watch(descriptor, folder, Self.folderMask) }
            guard case .success(let watch) = added else {
                if case .failure(.noSpace) = added {
                    let first = state.withLock { state in defer { state.limitReported = true }; return !state.limitReported }
                    if first {
                        failure = "\(folder): inotify's limit of watched folders was reached (raise fs.inotify.max_user_watches); "
                            + "folders past it are synced by the periodic full sync only"
                    }
                    return failure
                }
                continue  // gone since it was listed, or unreadable: the sync reports unreadable folders
            }
            state.withLock { $0.folders[watch] = folder }
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in entries {
                let path = folder + "/" + name
                var info = stat()
                if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { pending.append(path) }
            }
        }
        return failure
    }

    private func drain(_ onEvent: @Sendable (Event) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var changed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameStart = offset + MemoryLayout<inotify_event>.size
                let nameBytes = buffer[nameStart..<min(count, nameStart + length)].prefix { $0 != 0 }
                let name = String(decoding: nameBytes, as: UTF8.self)
                offset = nameStart + length
                if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    onEvent(.overflowed(nil))
                    continue
                }
                if mask & UInt32(IN_IGNORED) != 0 {
                    _ = state.withLock { $0.folders.removeValue(forKey: watch) }
                    continue
                }
                if name.hasPrefix(".cairn") { continue }
                changed = true
                let isFolder = mask & UInt32(IN_ISDIR) != 0
                if isFolder, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0,
                   let parent = state.withLock({ $0.folders[watch] }) {
                    // Files may land in a new folder before its watch exists: the sync that follows lists it whole.
                    if let failure = addTree(parent + "/" + name) { onEvent(.overflowed(failure)) }
                }
            }
        }
        if changed { onEvent(.changed) }
    }
}
