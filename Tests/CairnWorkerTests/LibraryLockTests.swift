import CairnCore
import CairnTesting
import Foundation
import Testing

@testable import CairnLibrary

@Suite struct LibraryLockTests {
    let since = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aSecondHolderIsRefusedAtOnceWithThePIDAndTime() throws {
        let library = try TemporaryDirectory()
        let held = try LibraryLock(libraryRoot: library.path, pid: 4242, now: since)
        let error = try #require(throws: LibraryLockedError.self) { try LibraryLock(libraryRoot: library.path) }
        #expect(error.holderPID == 4242)
        #expect(error.since == since)
        #expect(error.exitStatus == .libraryLocked)
        #expect(error.description == "library \(library.path) is locked (held by pid 4242 since 2027-01-15T08:00:00Z); nothing was done")
        withExtendedLifetime(held) {}
    }

    @Test func releasingTheValueReleasesTheLock() throws {
        let library = try TemporaryDirectory()
        var held: LibraryLock? = try LibraryLock(libraryRoot: library.path)
        #expect(throws: LibraryLockedError.self) { try LibraryLock(libraryRoot: library.path) }
        held = nil
        _ = held
        let again = try LibraryLock(libraryRoot: library.path)
        #expect(FileManager.default.fileExists(atPath: again.path))
    }

    @Test func anotherProcessSeesTheLockHeld() throws {
        let library = try TemporaryDirectory()
        var held: LibraryLock? = try LibraryLock(libraryRoot: library.path)
        let lockFile = library.subpath(".cairn.lock")
        #expect(throws: ExternalTool.Failure.self) { try ExternalTool.run(["flock", "--nonblock", lockFile, "true"]) }
        held = nil
        _ = held
        try ExternalTool.run(["flock", "--nonblock", lockFile, "true"])
    }

    @Test func aLockHeldByAnotherProcessIsRefused() throws {
        let library = try TemporaryDirectory()
        let lockFile = library.subpath(".cairn.lock")
        // The child takes the lock, says so, and holds it until its stdin closes.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        child.arguments = ["flock", lockFile, "sh", "-c", "echo locked; read line"]
        let input = Pipe(), output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        defer {
            try? input.fileHandleForWriting.close()
            child.waitUntilExit()
        }
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(said.hasPrefix("locked"))

        let error = try #require(throws: LibraryLockedError.self) { try LibraryLock(libraryRoot: library.path) }
        #expect(error.holderPID == nil)
        #expect(error.description.contains("is locked (held by another process)"))

        try input.fileHandleForWriting.close()
        child.waitUntilExit()
        _ = try LibraryLock(libraryRoot: library.path)
    }
}
