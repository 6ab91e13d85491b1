import CairnCore
import CairnTesting
import Foundation
import Testing

@testable import CairnHashing

/// An archive's entry read through its path (`<archive>/<entry>`): hashed, copied and read whole as a file is.
@Suite struct ArchiveEntryHashingTests {
    @Test(arguments: ["photos.zip", "photos.tgz"])
    func anEntryIsHashedCopiedAndReadWholeThroughItsPath(_ archive: String) throws {
        let folder = try TemporaryDirectory()
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let file = try folder.write(bytes, to: "scratch/a.jpg")
        try TestArchive.write([.text("first.jpg", "before"), .file("DCIM/a.jpg", from: file)], to: folder.subpath(archive))
        let expected = try SHA1Digest.checksum(of: [UInt8](bytes))
        let path = folder.subpath(archive + "/DCIM/a.jpg")

        let hasher = try FileHasher()
        let hashed = try hasher.hash(path: path)
        #expect(hashed.checksum == expected && hashed.fingerprint.size == Int64(bytes.count))
        #expect(hashed.header.bytes == [UInt8](bytes.prefix(FileHeader.capacity)))
        let copy = folder.subpath("copy.jpg")
        _ = try hasher.copy(from: path, to: copy, expected: expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == bytes)
        #expect(try hasher.readWhole(path: path, expected: expected) == [UInt8](bytes))
        // Another SHA1 than the walk's: the copy is refused and removed.
        let wrong = try SHA1Digest.checksum(of: [1, 2, 3])
        #expect(throws: HashingError.self) { try hasher.copy(from: path, to: folder.subpath("bad.jpg"), expected: wrong) }
        #expect(!FileManager.default.fileExists(atPath: folder.subpath("bad.jpg")))

        // The archive rewritten after the walk: its stat facts moved, so the entry is read again next run.
        try FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: folder.subpath(archive))
        #expect {
            try hasher.hash(path: path, expected: hashed.fingerprint)
        } throws: { error in
            if case HashingError.changedWhileReading = error { return true } else { return false }
        }
        // A name the archive does not hold fails naming both.
        #expect {
            try hasher.hash(path: folder.subpath(archive + "/DCIM/b.jpg"))
        } throws: { error in
            guard case HashingError.archive(let failure) = error else { return false }
            return failure.entry == "DCIM/b.jpg" && failure.category == .notFound
        }
    }
}
