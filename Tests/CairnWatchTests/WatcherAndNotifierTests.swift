import CairnCore
import CairnTesting
import Foundation
import XCTest
@testable import CairnWatch

final class TreeWatcherTests: XCTestCase {
    /// Waits until `condition` holds, up to a generous limit (inotify is asynchronous; this is no timing assertion).
    private func eventually(_ what: String, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !condition(), Date() < deadline { usleep(10_000) }
        XCTAssertTrue(condition(), what)
    }

    func testFilesInFoldersMadeAfterTheStartAreSeenAndCairnsMarkerIsNot() throws {
        let root = try TemporaryDirectory(prefix: "tree-watcher")
        try FileManager.default.createDirectory(atPath: root.subpath("old"), withIntermediateDirectories: true)
        let events = Locked<[TreeWatcher.Event]>([])
        let watcher = try TreeWatcher(root: root.path) { event in events.withLock { $0.append(event) } }
        XCTAssertEqual(watcher.watchedFolders, 2)

        _ = try root.write(Data("marker".utf8), to: ".cairn-source")
        usleep(200_000)
        XCTAssertEqual(events.withLock { $0 }, [], "cairn's own marker is not a change")

        try FileManager.default.createDirectory(atPath: root.subpath("new/deeper"), withIntermediateDirectories: true)
        eventually("a new folder is a change") { !events.withLock { $0 }.isEmpty }
        eventually("folders made later get watches") { watcher.watchedFolders == 4 }
        events.withLock { $0.removeAll() }
        _ = try root.write(Data("photo".utf8), to: "new/deeper/a.jpg")
        eventually("a file in a folder made later is a change") { events.withLock { $0 }.contains(.changed) }
        events.withLock { $0.removeAll() }
        try FileManager.default.removeItem(atPath: root.subpath("old"))
        eventually("a deleted folder is a change") { events.withLock { $0 }.contains(.changed) }
        eventually("its watch is gone") { watcher.watchedFolders == 3 }
    }

    func testASourceUnmountedAndBackIsWatchedAgain() throws {
        let parent = try TemporaryDirectory(prefix: "tree-rewatch")
        let root = parent.subpath("source")
        try FileManager.default.createDirectory(atPath: root + "/a", withIntermediateDirectories: true)
        let events = Locked<[TreeWatcher.Event]>([])
        let record: @Sendable (TreeWatcher.Event) -> Void = { event in events.withLock { $0.append(event) } }
        let watcher = try TreeWatcher(root: root, onEvent: record)
        XCTAssertFalse(watcher.rewatchIfNeeded(onEvent: record), "nothing to do while the source is watched")
        try FileManager.default.moveItem(atPath: root, toPath: parent.subpath("away"))
        try FileManager.default.createDirectory(atPath: root + "/b/c", withIntermediateDirectories: true)
        // Moved away, its watch follows the folder: the new folder at the path is not watched until asked.
        try FileManager.default.removeItem(atPath: parent.subpath("away"))
        eventually("the old tree's watches are gone") { watcher.watchedFolders == 0 }
        XCTAssertTrue(watcher.rewatchIfNeeded(onEvent: record))
        XCTAssertEqual(watcher.watchedFolders, 3)
        events.withLock { $0.removeAll() }
        _ = try parent.write(Data("x".utf8), to: "source/b/c/new.jpg")
        eventually("a file in the new tree is a change") { events.withLock { $0 }.contains(.changed) }
    }
}

final class SystemdNotifierTests: XCTestCase {
    func testMessagesReachTheSocketSystemdWouldListenOn() throws {
        let folder = try TemporaryDirectory(prefix: "notify")
        let path = folder.subpath("notify.sock")
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(receiver, 0)
        defer { close(receiver) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0)

        let notifier = try XCTUnwrap(SystemdNotifier(environment: ["NOTIFY_SOCKET": path]))
        try notifier.ready(status: "watching /photos")
        try notifier.watchdog()
        try notifier.stopping()
        var received: [String] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        for _ in 0..<3 {
            let count = buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) }
            received.append(String(decoding: buffer[0..<max(0, count)], as: UTF8.self))
        }
        XCTAssertEqual(received, ["READY=1\nSTATUS=watching /photos", "WATCHDOG=1", "STOPPING=1"])
        XCTAssertNil(SystemdNotifier(environment: [:]))
    }

    func testTheWatchdogIsPettedAtHalfItsPeriodAndOnlyForThisProcess() {
        XCTAssertEqual(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000"]), 15)
        XCTAssertNil(SystemdNotifier.watchdogInterval(environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]))
        XCTAssertNil(SystemdNotifier.watchdogInterval(environment: [:]))
    }
}
