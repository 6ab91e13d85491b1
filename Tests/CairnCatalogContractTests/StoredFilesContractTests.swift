import CairnCatalog
import CairnCore
import CairnReconcileOracle
import Foundation
import Testing

/// What `cairn check` reads of every catalog backend alike: the files the library's assets name, a shard at a time,
/// in byte order, the trash's left out.
@Suite struct StoredFilesContractTests {
    static let moment = Date(timeIntervalSince1970: 1_795_000_000)

    /// A checksum in shard `shard` (two hex digits), told apart by `number`.
    static func checksum(_ shard: String, _ number: Int) -> Checksum {
        Checksum(hex: shard + String(repeating: "0", count: 32) + String(format: "%06x", number))!
    }

    static func asset(_ checksum: Checksum, size: Int64, path: String? = nil) -> AssetRecord {
        AssetRecord(checksum: checksum, kind: .photo, size: size, originalExtension: "jpg", firstSourcePath: "x.jpg",
                    originalPath: path ?? "originals/\(checksum.hex.prefix(2))/\(checksum.hex).jpg", importedAt: moment,
                    runID: "import-1")
    }

    static func derived(_ checksum: Checksum, _ role: DerivedFileRecord.Role, path: String, bytes: Int64) -> DerivedFileRecord {
        DerivedFileRecord(checksum: checksum, role: role, path: path, format: "webp", width: 4, height: 3,
                          byteCount: bytes, createdAt: moment)
    }

    @Test(arguments: CatalogBackend.allCases)
    func theFilesOfAShardAreReadInByteOrderWithoutTheTrash(_ backend: CatalogBackend) async throws {
        try await backend.withCatalog { catalog in
            let a1 = Self.checksum("ab", 1), a2 = Self.checksum("ab", 2), trashed = Self.checksum("ab", 3)
            let other = Self.checksum("ac", 1), last = Self.checksum("ff", 1), remote = Self.checksum("ab", 4)
            try await catalog.insertAssets([
                Self.asset(a2, size: 20), Self.asset(a1, size: 10), Self.asset(trashed, size: 30),
                Self.asset(other, size: 40), Self.asset(last, size: 50), Self.asset(remote, size: 60, path: ""),
            ])
            let a1Original = "originals/ab/\(a1.hex).jpg"
            try await catalog.saveImportItemStates([], with: StageRows(derivedFiles: [
                Self.derived(a1, .thumbnail, path: "derived/ab/\(a1.hex)-thumb.webp", bytes: 5),
                // A preview that is its own original is the original's, not a derived file.
                Self.derived(a1, .preview, path: a1Original, bytes: 10),
                Self.derived(a2, .clip, path: "derived/ab/\(a2.hex)-clip.mp4", bytes: 7),
                Self.derived(trashed, .thumbnail, path: "derived/ab/\(trashed.hex)-thumb.webp", bytes: 3),
            ]))
            // One sidecar of two assets is one file; a sidecar of a trashed asset alone is in the trash.
            let xmp = Self.checksum("ab", 9), aae = Self.checksum("ab", 8)
            for asset in [a1, a2] {
                try await catalog.linkSidecar(SidecarRecord(checksum: xmp, asset: asset, kind: "xmp",
                                                            path: "sidecars/ab/\(xmp.hex).xmp", sourcePath: "x.xmp",
                                                            sourceSize: 99, linkedAt: Self.moment))
            }
            try await catalog.linkSidecar(SidecarRecord(checksum: aae, asset: trashed, kind: "aae",
                                                        path: "sidecars/ab/\(aae.hex).aae", sourcePath: "x.aae",
                                                        linkedAt: Self.moment))
            let source = try await catalog.sourceID(forRoot: "/takeout")
            let metadata = Self.checksum("ab", 7)
            _ = try await catalog.saveAlbum(AlbumRecord(sourceID: source, folder: "Trip", title: "Trip", description: nil,
                                                        date: nil, metadataChecksum: metadata,
                                                        metadataPath: "sidecars/ab/\(metadata.hex).json",
                                                        metadataSourcePath: "Trip/metadata.json", updatedAt: Self.moment),
                                            members: [a1])
            try await catalog.markTrashed([(trashed, ["originals/ab/\(trashed.hex).jpg"])], runID: "sync-1", at: Self.moment)

            #expect(try await catalog.storedFiles(in: .originals, shard: "ab") == [
                CatalogFile(path: a1Original, size: 10, role: .original, checksum: a1),
                CatalogFile(path: "originals/ab/\(a2.hex).jpg", size: 20, role: .original, checksum: a2),
            ])
            #expect(try await catalog.storedFiles(in: .derived, shard: "ab") == [
                CatalogFile(path: "derived/ab/\(a1.hex)-thumb.webp", size: 5, role: .thumbnail, checksum: a1),
                CatalogFile(path: "derived/ab/\(a2.hex)-clip.mp4", size: 7, role: .clip, checksum: a2),
            ])
            #expect(try await catalog.storedFiles(in: .sidecars, shard: "ab") == [
                CatalogFile(path: "sidecars/ab/\(metadata.hex).json", size: nil, role: .albumMetadata, checksum: metadata),
                CatalogFile(path: "sidecars/ab/\(xmp.hex).xmp", size: 99, role: .sidecar, checksum: xmp),
            ])
            #expect(try await catalog.storedFiles(in: .originals, shard: "ac").map(\.checksum) == [other])
            #expect(try await catalog.storedFiles(in: .originals, shard: "ff").map(\.checksum) == [last])
            #expect(try await catalog.storedFiles(in: .originals, shard: "00").isEmpty)
            #expect(try await catalog.storedFiles(in: .derived, shard: "ac").isEmpty)
        }
    }
}
