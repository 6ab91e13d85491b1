import CairnCatalog
import CairnCore
import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `cairn check` as a real process: the catalog against the library's folder, and against an S3 copy on the suite's
/// SeaweedFS; what it finds, what `--repair` mends, and what it never touches.
@Suite struct CheckCommandTests {
    static let clean = "0 orphan(s), 0 missing, 0 of another size"

    @Test func differencesAreNamedAndARepairMendsTheDerivedOnesAndKeepsEveryOriginal() async throws {
        let library = try ImportedLibrary(files: ["a.jpg", "b.jpg", "c.jpg"])
        let first = try library.cairn(["check"])
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains(Self.clean), "\(first.standardOutput)")

        let (opened, catalog) = try library.open()
        let a = try await library.asset("a.jpg", in: catalog), b = try await library.asset("b.jpg", in: catalog)
        let c = try await library.asset("c.jpg", in: catalog)
        let aThumb = try await #require(try catalog.derivedFiles(of: a.checksum).first { $0.role == .thumbnail })
        let bThumb = try await #require(try catalog.derivedFiles(of: b.checksum).first { $0.role == .thumbnail })
        catalog.close()
        opened.close()
        // A thumbnail lost, another cut short, an original lost, and two files no run recorded.
        let shard = String(a.checksum.hex.prefix(2))
        let stranger = shard + String(repeating: "e", count: 38)
        let orphanDerived = "derived/\(shard)/\(stranger)-thumb.webp"
        let orphanOriginal = "originals/\(shard)/\(stranger).jpg"
        try FileManager.default.removeItem(atPath: library.root + "/" + aThumb.path)
        try Data(try library.bytes(bThumb.path).prefix(10)).write(to: URL(fileURLWithPath: library.root + "/" + bThumb.path))
        try FileManager.default.removeItem(atPath: library.root + "/" + c.originalPath)
        try Data("not recorded".utf8).write(to: URL(fileURLWithPath: library.root + "/" + orphanDerived))
        try Data("kept anyway".utf8).write(to: URL(fileURLWithPath: library.root + "/" + orphanOriginal))

        let found = try library.cairn(["check"])
        #expect(found.status == 3, "\(found.standardError)")
        let lines = found.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("missing  \(aThumb.path) (thumbnail") }, "\(found.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("size     \(bThumb.path) (thumbnail: 10 bytes") }, "\(found.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("missing  \(c.originalPath) (original") }, "\(found.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("orphan   \(orphanDerived) (12 bytes") }, "\(found.standardOutput)")
        #expect(lines.contains { $0.hasPrefix("orphan   \(orphanOriginal) (11 bytes") }, "\(found.standardOutput)")
        #expect(found.standardOutput.contains("2 orphan(s), 2 missing, 1 of another size."), "\(found.standardOutput)")
        #expect(library.exists(orphanDerived) && library.exists(orphanOriginal))  // a check without --repair changes nothing

        let repaired = try library.cairn(["check", "--repair"])
        #expect(repaired.status == 3, "\(repaired.standardError)")  // the lost original and the kept orphan remain
        #expect(repaired.standardOutput.contains("; 3 mended."), "\(repaired.standardOutput)")
        #expect(!library.exists(orphanDerived))
        #expect(library.exists(orphanOriginal))
        #expect(!library.exists(bThumb.path))  // the wrong one is gone; the next import makes both again

        let again = try CairnBinary.run(["import", library.source, "--library", library.root])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(library.exists(aThumb.path) && library.exists(bThumb.path))
        let after = try library.cairn(["check"])
        #expect(after.standardOutput.contains("1 orphan(s), 1 missing, 0 of another size."), "\(after.standardOutput)")

        try FileManager.default.removeItem(atPath: library.root + "/" + orphanOriginal)
        try library.files["c.jpg"]!.write(to: URL(fileURLWithPath: library.root + "/" + c.originalPath))
        let mended = try library.cairn(["check"])
        #expect(mended.status == 0, "\(mended.standardOutput)")
        #expect(mended.standardOutput.contains(Self.clean))
    }

    @Test func aStoreCopyIsCheckedAndARepairSendsWhatItLacksFromTheFolder() async throws {
        let library = try ImportedLibrary(files: ["a.jpg", "b.jpg"])
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let copied = try library.cairn(["store", "copy", "--to", location], environment: environment)
        #expect(copied.status == 0, "\(copied.standardError)")
        let clean = try library.cairn(["check", "--store", location], environment: environment)
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
        #expect(clean.standardOutput.contains(Self.clean), "\(clean.standardOutput)")

        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        let originals = try await store.list(prefix: "originals/", after: nil, limit: 10)
        let lost = try #require(originals.first).key
        try await store.delete(lost)
        let shard = lost.text.split(separator: "/")[1]
        let orphan = try ObjectKey("derived/\(shard)/\(shard)\(String(repeating: "d", count: 38))-thumb.webp")
        let scratch = try TemporaryDirectory()
        try scratch.write(Data("stray".utf8), to: "stray")
        _ = try await store.put(orphan, fromFile: scratch.subpath("stray"))

        let found = try library.cairn(["check", "--store", location], environment: environment)
        #expect(found.status == 3)
        #expect(found.standardOutput.contains("missing  \(lost.text) (original"), "\(found.standardOutput)")
        #expect(found.standardOutput.contains("orphan   \(orphan.text) (5 bytes"), "\(found.standardOutput)")
        #expect(!found.standardOutput.contains(environment["AWS_ACCESS_KEY_ID"]!))

        let repaired = try library.cairn(["check", "--store", location, "--repair"], environment: environment)
        #expect(repaired.status == 0, "\(repaired.standardOutput)\(repaired.standardError)")
        #expect(repaired.standardOutput.contains("copied again from the library's folder"), "\(repaired.standardOutput)")
        #expect(try await store.read(lost, range: nil) == Array(try library.bytes(lost.text)))
        #expect(try await store.size(of: orphan) == nil)
        let after = try library.cairn(["check", "--store", location], environment: environment)
        #expect(after.standardOutput.contains(Self.clean), "\(after.standardOutput)")
        await store.close()
    }
}
