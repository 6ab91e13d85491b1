#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CairnCore
import Foundation

/// An exclusive hold on one library, so two cairn processes (two cron runs, a person and cron)
/// never work on it at once.
///
/// A non-blocking `flock` on `<library>/.cairn.lock`: the kernel drops it when the process dies,
/// so a crash never leaves a stale lock. The file holds the holder's pid and start time for the
/// message the next contender prints. Released when the value is released.
public final class LibraryLock: Sendable {
    public let path: String
    /// The locked descriptor; nil once released.
    private let held: Locked<Int32?>

    /// Takes the lock, waiting up to `patience` (trying every 20 ms) for another holder to let go, so a run
    /// starting as another ends (a cron sync after `cairn restore`) is not turned away; a run holding the library
    /// is. Throws `LibraryLockedError` when it stays held.
    public static func take(libraryRoot: String, pid: Int32 = getpid(), patience: Duration = .seconds(1)) async throws
        -> LibraryLock
    {
        let deadline = ContinuousClock.now + patience
        while true {
            do { return try LibraryLock(libraryRoot: libraryRoot, pid: pid) } catch let locked as LibraryLockedError {
                guard ContinuousClock.now < deadline else { throw locked }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Takes the lock at once, or throws `LibraryLockedError`.
    public init(libraryRoot: String, pid: Int32 = getpid(), now: Date = Date()) throws {
        let path = LibraryLayout(root: libraryRoot).lockPath
        let descriptor = try SystemCall.result { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }.get("open", path)
        if case .failure(let code) = SystemCall.result({ flock(descriptor, LOCK_EX | LOCK_NB) }) {
            let holder = Self.readHolder(descriptor)
            close(descriptor)
            if code == .wouldBlock {
                throw LibraryLockedError(libraryRoot: libraryRoot, holderPID: holder?.pid, since: holder?.since)
            }
            throw SystemCallError("flock", path: path, code: code)
        }
        do {
            let holder = try Timestamp.jsonEncoder().encode(Holder(pid: pid, since: now)) + Data("\n".utf8)
            try SystemCall.result { ftruncate(descriptor, 0) }.get("ftruncate", path)
            try SystemCall.result { lseek(descriptor, 0, SEEK_SET) }.get("lseek", path)
            try holder.withUnsafeBytes { bytes in try writeFully(descriptor, bytes, path: path) }
        } catch {
            close(descriptor)
            throw error
        }
        self.path = path
        held = Locked(descriptor)
    }

    /// Gives the lock up now (a long-lived process such as `cairn watch` runs one sync after another); once only.
    public func release() {
        held.withLock { descriptor in
            guard let fd = descriptor else { return }
            // The holder record stays: it is only read while the lock is held, and removing the file
            // would let two processes lock two different inodes.
            flock(fd, LOCK_UN)
            close(fd)
            descriptor = nil
        }
    }

    deinit { release() }

    package struct Holder: Codable {
        var pid: Int32
        var since: Date
    }

    /// The pid the last holder wrote into the lock file (it may have ended since), read without locking.
    package static func recordedHolder(libraryRoot: String) -> Int32? {
        let descriptor = open(LibraryLayout(root: libraryRoot).lockPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return readHolder(descriptor)?.pid
    }

    private static func readHolder(_ descriptor: Int32) -> Holder? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return try? Timestamp.jsonDecoder().decode(Holder.self, from: Data(buffer[..<count]))
    }
}

/// Another process holds the library: exit with `ExitStatus.libraryLocked` and do nothing.
public struct LibraryLockedError: Error, Equatable, CustomStringConvertible {
    public let libraryRoot: String
    public let holderPID: Int32?
    public let since: Date?
    /// Who holds it, when that is another host's run (the library's lock in a shared queue's PostgreSQL).
    public let elsewhere: String?
    /// Whether this run held the lock and lost it to that other run, and stopped.
    public let lost: Bool

    public init(libraryRoot: String, holderPID: Int32?, since: Date?) {
        self.libraryRoot = libraryRoot
        self.holderPID = holderPID
        self.since = since
        elsewhere = nil
        lost = false
    }

    /// The library's lock in PostgreSQL is held by `holder`; `lost`: this run had it and stopped.
    public init(libraryRoot: String, heldElsewhereBy holder: String, lost: Bool = false) {
        self.libraryRoot = libraryRoot
        holderPID = nil
        since = nil
        elsewhere = holder
        self.lost = lost
    }

    public var exitStatus: ExitStatus { .libraryLocked }

    public var description: String {
        if let elsewhere, lost {
            return "library \(libraryRoot): its lock was lost to another run (\(elsewhere)) while the connection "
                + "holding it was down; this run stopped, and what it finished is kept"
        }
        if let elsewhere { return "library \(libraryRoot) is locked (\(elsewhere)); nothing was done" }
        var holder = "held by " + (holderPID.map { "pid \($0)" } ?? "another process")
        if let since { holder += " since " + Timestamp.toTheSecond(since) }
        return "library \(libraryRoot) is locked (\(holder)); nothing was done"
    }
}

/// A shared lock for readers that must see the library at rest (`dry-run`): many readers at once, never
/// beside a running sync. Taken on the existing lock file opened read-only, so taking it writes nothing.
public final class ReaderLock: Sendable {
    /// The shared descriptor (-1 when no run ever took the lock, or once released).
    private let held: Locked<Int32>

    /// - Throws: `LibraryLockedError` at once when a run holds the library.
    public init(libraryRoot: String) throws {
        let path = LibraryLayout(root: libraryRoot).lockPath
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        // Refused before `held` is set: a class whose stored properties are all set runs `deinit` when its init
        // throws, and a second close would take whatever descriptor the process opened since.
        if fd >= 0, flock(fd, LOCK_SH | LOCK_NB) != 0 {
            close(fd)
            throw LibraryLockedError(libraryRoot: libraryRoot, holderPID: nil, since: nil)
        }
        held = Locked(fd)  // -1 when no run ever took the lock: nothing to wait for
    }

    /// Gives the shared lock up now; once only.
    public func release() {
        held.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }
}
