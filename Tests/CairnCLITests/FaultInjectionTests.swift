import CairnTesting
import Foundation
import Testing

/// Hardening issue, fault injection with real failures: the library on a small tmpfs that fills up mid-run, in a
/// private mount namespace (`unshare -m`, root) so nothing leaks onto the machine.
@Suite struct FaultInjectionTests {
    static func sha1(_ path: String) throws -> String {
        String(String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self).prefix(40))
    }

    /// Every regular file below `folder`.
    static func files(below folder: String) -> [String] {
        (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter {
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder + "/" + $0, isDirectory: &isFolder) && !isFolder.boolValue
        }
    }

    /// Runs `script` as root in a private mount namespace with `MNT`, `SRC` (`work`'s mnt and src), `OUT` (`work`)
    /// and `CAIRN` set; returns a reader of the files it left in `OUT` ("" when missing).
    static func runInPrivateMounts(_ script: String, work: TemporaryDirectory) throws -> (String) -> String {
        let finished = try ChildProcessRunner.run(["unshare", "-m", "bash", "-c", script], environment: [
            "MNT": work.subpath("mnt"), "SRC": work.subpath("src"), "OUT": work.path, "CAIRN": CairnBinary.path,
        ])
        #expect(finished == 0, "the namespace script failed (\(finished)): is this run as root with unshare?")
        return { name in (try? String(contentsOfFile: work.subpath(name), encoding: .utf8)) ?? "" }
    }

    @Test func aFullDiskIsReportedPublishesNothingPartialAndTheNextRunCompletes() throws {
        let work = try TemporaryDirectory()
        let base = try MediaFixtures.jpeg(at: work.subpath("base.jpg"), width: 640, height: 480, quality: 2)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: base))
        try FileManager.default.removeItem(atPath: base)
        var expected: Set<String> = []
        for index in 0..<24 {
            try work.write(bytes + Data("variant \(index)".utf8), to: "src/IMG_\(index).jpg")
            expected.insert(try Self.sha1(work.subpath("src/IMG_\(index).jpg")))
        }
        try FileManager.default.createDirectory(atPath: work.subpath("mnt"), withIntermediateDirectories: true)
        // Room for the catalog and about half of the originals: the disk fills during the transfer lane.
        let size = max(700, bytes.count * 12 / 1024 + 400)
        let script = """
            set -u
            mount -t tmpfs -o size=\(size)k tmpfs "$MNT" || exit 90
            "$CAIRN" import "$SRC" --library "$MNT/lib" --plain --clips off > "$OUT/run1.txt" 2>&1; echo $? > "$OUT/run1.rc"
            sqlite3 "$MNT/lib/catalog.sqlite" "PRAGMA integrity_check" > "$OUT/integrity1.txt" 2>&1
            cp -a "$MNT/lib" "$OUT/lib1"
            mount -o remount,size=64m "$MNT"
            "$CAIRN" import "$SRC" --library "$MNT/lib" --plain --clips off > "$OUT/run2.txt" 2>&1; echo $? > "$OUT/run2.rc"
            sqlite3 "$MNT/lib/catalog.sqlite" "PRAGMA integrity_check" > "$OUT/integrity2.txt" 2>&1
            cp -a "$MNT/lib" "$OUT/lib2"
            """
        let text = try Self.runInPrivateMounts(script, work: work)

        // Run 1: the full disk is named, the run says files failed, and the catalog is sound.
        #expect(text("run1.rc").trimmingCharacters(in: .whitespacesAndNewlines) != "0")
        #expect(text("run1.txt").contains("No space left on device"), "\(text("run1.txt"))")
        #expect(text("integrity1.txt").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        // Nothing partial was published: every original's bytes hash to its name.
        let originals1 = Self.files(below: work.subpath("lib1/originals"))
        #expect(!originals1.isEmpty && originals1.count < expected.count, "\(originals1.count) originals after a full disk")
        for original in originals1 {
            let name = (original as NSString).lastPathComponent
            #expect(try Self.sha1(work.subpath("lib1/originals/" + original)) == String(name.prefix(40)))
        }

        // Run 2, with room: everything is there once, byte-identical, and the run succeeds.
        #expect(text("run2.rc").trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(text("run2.txt"))")
        #expect(text("integrity2.txt").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        let originals2 = Self.files(below: work.subpath("lib2/originals"))
        #expect(originals2.count == expected.count)
        var stored: Set<String> = []
        for original in originals2 { stored.insert(try Self.sha1(work.subpath("lib2/originals/" + original))) }
        #expect(stored == expected)
        #expect(Self.files(below: work.subpath("lib2/tmp")).isEmpty)
    }

    /// A video bigger than the room left: its copy (reading and hashing on one thread, writing on another) meets
    /// the full disk; the run names it, publishes no partial original, and the catalog is sound.
    @Test func aBigCopyThatFillsTheDiskPublishesNothingPartial() throws {
        let work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.subpath("src"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.subpath("mnt"), withIntermediateDirectories: true)
        let script = """
            set -u
            head -c 25165824 /dev/urandom > "$SRC/clip.mp4" || exit 91
            mount -t tmpfs -o size=12m tmpfs "$MNT" || exit 90
            "$CAIRN" import "$SRC" --library "$MNT/lib" --plain --clips off > "$OUT/run.txt" 2>&1; echo $? > "$OUT/run.rc"
            sqlite3 "$MNT/lib/catalog.sqlite" "PRAGMA integrity_check" > "$OUT/integrity.txt" 2>&1
            find "$MNT/lib/originals" "$MNT/lib/tmp" -type f > "$OUT/files.txt" 2>/dev/null
            """
        let text = try Self.runInPrivateMounts(script, work: work)
        #expect(text("run.rc").trimmingCharacters(in: .whitespacesAndNewlines) != "0")
        #expect(text("run.txt").contains("No space left on device"), "\(text("run.txt"))")
        #expect(text("integrity.txt").trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(text("files.txt").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(text("files.txt"))")
    }
}

/// Runs a command with extra environment variables, output discarded; returns its exit status.
enum ChildProcessRunner {
    static func run(_ arguments: [String], environment: [String: String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Hardening issue, EIO: reads of one source file fail mid-file (an `LD_PRELOAD` shim built at test time, as a
/// failing disk would): that file fails with its errno, the run goes on, and a sync holds every deletion.
@Suite struct ReadErrorTests {
    @Test func aFileThatFailsToReadFailsAloneAndHoldsTheSyncsDeletions() throws {
        let work = try TemporaryDirectory()
        let shim = try PreloadShim.build("eio-shim.c", in: work)
        let bytes = try PreloadShim.picture(in: work)
        #expect(bytes.count > 8192, "the picture must be larger than the part the shim lets through")
        for name in ["IMG_1.jpg", "IMG_2.jpg", "IMG_3.jpg", "IMG_4.jpg", "IMG_5.jpg", "EIO_6.jpg"] {
            try work.write(bytes + Data(name.utf8), to: "src/\(name)")
        }
        let library = work.subpath("lib")
        func sync(_ extra: [String], failingReads: Bool) throws -> CairnBinary.Result {
            try CairnBinary.run(["sync", work.subpath("src"), "--library", library, "--plain"] + extra,
                                environment: failingReads ? ["LD_PRELOAD": shim] : [:])
        }
        // A first sync, reads failing: the one file fails with EIO, the others are imported.
        let first = try sync([], failingReads: true)
        #expect(first.status == 3, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("EIO_6.jpg") && first.standardOutput.contains("Input/output error"))
        #expect(first.standardOutput.contains("new          5"))

        // The disk recovers; then a file is deleted at the source, and the failing file is read again.
        #expect(try sync([], failingReads: false).status == 0)
        try FileManager.default.removeItem(atPath: work.subpath("src/IMG_1.jpg"))
        _ = try sync(["--apply-deletions"], failingReads: false)  // confirms the deletion
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)],
                                              ofItemAtPath: work.subpath("src/EIO_6.jpg"))
        let held = try sync(["--apply-deletions", "--quarantine-days", "0"], failingReads: true)
        #expect(held.status != 0)
        #expect(held.standardOutput.contains("could not read 1 path (first: EIO_6.jpg:")
                && held.standardOutput.contains("Input/output error"), "\(held.standardOutput)")
        let trash = (FileManager.default.enumerator(atPath: library + "/trash")?.allObjects as? [String] ?? [])
            .filter { $0.contains("/originals/") }
        #expect(trash.isEmpty, "an I/O error at the source must hold every deletion: \(trash)")
    }
}

/// A source file that another program appends to, truncates or replaces while cairn reads it (an `LD_PRELOAD`
/// shim changes it at the second read, every time): it fails alone with "changed while it was being read",
/// nothing of it is kept or cached, and the next run takes the file as it then is, byte for byte.
@Suite struct FileMutationTests {
    @Test(arguments: ["MUTATE_APPEND_", "MUTATE_TRUNCATE_", "MUTATE_REPLACE_"])
    func aFileChangedWhileReadIsDetectedNotCachedAndTakenNextRun(prefix: String) throws {
        let work = try TemporaryDirectory()
        let shim = try PreloadShim.build("mutate-shim.c", in: work)
        // Bigger than the hasher's 128 KiB read (smaller than the size it maps from), so every read of it takes a
        // second read() past the start, where the shim acts: a file read in one call would never be changed.
        let bytes = try PreloadShim.picture(in: work) + Data(repeating: 0, count: 200 << 10)
        for name in ["IMG_1.jpg", "IMG_2.jpg", "\(prefix)3.jpg"] {
            try work.write(bytes + Data(name.utf8), to: "src/\(name)")
        }
        let library = work.subpath("lib")
        func run(mutating: Bool) throws -> CairnBinary.Result {
            try CairnBinary.run(["import", work.subpath("src"), "--library", library, "--plain", "--clips", "off"],
                                environment: mutating ? ["LD_PRELOAD": shim] : [:])
        }
        let first = try run(mutating: true)
        #expect(first.status == 3, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("\(prefix)3.jpg") && first.standardOutput.contains("changed while it was being read"),
                "\(first.standardOutput)")
        let originals = { (FileManager.default.enumerator(atPath: library + "/originals")?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".jpg") } }
        #expect(originals().count == 2, "only the two steady files are kept: \(originals())")

        let second = try run(mutating: false)
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        let now = try Data(contentsOf: URL(fileURLWithPath: work.subpath("src/\(prefix)3.jpg")))
        #expect(now != bytes + Data("\(prefix)3.jpg".utf8), "the shim changed the file")
        let kept = try originals().map { try Data(contentsOf: URL(fileURLWithPath: library + "/originals/" + $0)) }
        #expect(kept.count == 3 && kept.contains(now), "the file as it now is, byte for byte")
    }
}

/// The `LD_PRELOAD` shims of `Tests/Fixtures`, built at test time, and the picture their tests feed through them.
enum PreloadShim {
    static func build(_ source: String, in work: TemporaryDirectory) throws -> String {
        let shim = work.subpath(source.replacingOccurrences(of: ".c", with: ".so"))
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/\(source)").path
        try ExternalTool.run(["cc", "-shared", "-fPIC", "-O1", "-o", shim, path, "-ldl"])
        return shim
    }

    /// A 320x240 JPEG well over 8 KB (more than the part the EIO shim lets through).
    static func picture(in work: TemporaryDirectory) throws -> Data {
        let base = try MediaFixtures.jpeg(at: work.subpath("base.jpg"), width: 320, height: 240, quality: 2)
        return try Data(contentsOf: URL(fileURLWithPath: base))
    }
}
