import CairnCatalog
import CairnCheck
import CairnCore
import CairnReconcileOracle
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `StoreCheck`'s merge against a set-difference oracle: random libraries (a real SQLite catalog) and stores (the
/// folder, and S3 on the suite's SeaweedFS) with files lost, cut short and never recorded, listed in pages of every
/// small size, so shard changes, skipped shards and page ends fall everywhere.
@Suite struct StoreCheckTests {
    struct Expected: Equatable {
        var orphans: Set<String> = []
        var missing: Set<String> = []
        var mismatched: Set<String> = []
    }

    @Test(arguments: StoreBackend.allCases)
    func theMergeFindsWhatASetDifferenceFinds(_ backend: StoreBackend) async throws {
        for seed in 0 ..< UInt64(backend == .folder ? 12 : 3) {
            try await backend.withStore { store in
                var random = SplitMix64(seed: seed)
                let folder = try TemporaryDirectory()
                let catalog = try SQLiteCatalog(path: folder.subpath("catalog.sqlite"))
                defer { catalog.close() }
                let files = try SourceFiles()
                var expected = Expected()
                var catalogued: [String: Int64] = [:]

                // Assets in a few shards, the first and the last among them, with and without a thumbnail.
                let shards = ["00", "3a", "3b", "c0", "ff"]
                var assets: [AssetRecord] = [], derived: [DerivedFileRecord] = []
                for number in 0 ..< 40 {
                    let shard = shards[Int(random.next() % UInt64(shards.count))]
                    let hex = shard + String(format: "%038llx", random.next() % 1_000_000_000 * 100 + UInt64(number))
                    let checksum = try #require(Checksum(hex: hex))
                    let size = Int64(1 + random.next() % 20)
                    let path = "originals/\(shard)/\(hex).jpg"
                    assets.append(AssetRecord(checksum: checksum, kind: .photo, size: size, originalExtension: "jpg",
                                              firstSourcePath: "\(number).jpg", originalPath: path, importedAt: Date(),
                                              runID: "import-1"))
                    catalogued[path] = size
                    if random.next() % 2 == 0 {
                        let thumbnail = "derived/\(shard)/\(hex)-thumb.webp"
                        let bytes = Int64(1 + random.next() % 20)
                        derived.append(DerivedFileRecord(checksum: checksum, role: .thumbnail, path: thumbnail,
                                                         format: "webp", width: 4, height: 3, byteCount: bytes,
                                                         createdAt: Date()))
                        catalogued[thumbnail] = bytes
                    }
                }
                try await catalog.insertAssets(assets)
                try await catalog.saveImportItemStates([], with: StageRows(derivedFiles: derived))

                for (path, size) in catalogued {
                    switch random.next() % 7 {
                    case 0: expected.missing.insert(path)
                    case 1:
                        expected.mismatched.insert(path)
                        _ = try await store.put(try ObjectKey(path), fromFile: try files.file(distinctBytes(Int(size) + 1, seed: random.next())))
                    default:
                        _ = try await store.put(try ObjectKey(path), fromFile: try files.file(distinctBytes(Int(size), seed: random.next())))
                    }
                }
                // Never recorded: in a shard the catalog knows, in one it does not, and outside any shard.
                let strangers = ["originals/3a/3a\(String(repeating: "9", count: 38)).jpg",
                                 "derived/7f/7f\(String(repeating: "1", count: 38))-thumb.webp",
                                 "originals/notes.txt", "derived/zz/x", "sidecars/ff/ff.xmp"]
                for key in strangers where random.next() % 3 != 0 {
                    expected.orphans.insert(key)
                    _ = try await store.put(try ObjectKey(key), fromFile: try files.file([1, 2, 3]))
                }

                let found = Locked(Expected())
                var check = StoreCheck(catalog: catalog, store: store)
                check.pageSize = Int(1 + random.next() % 5)
                check.onFinding = { finding in
                    found.withLock { found in
                        switch finding {
                        case .orphan(let object): found.orphans.insert(object.key.text)
                        case .missing(let file): found.missing.insert(file.path)
                        case .sizeMismatch(let file, _): found.mismatched.insert(file.path)
                        }
                    }
                }
                let report = try await check.run()
                let seen = found.withLock { $0 }
                #expect(seen == expected, "seed \(seed), page size \(check.pageSize)")
                #expect(report.orphans == expected.orphans.count && report.missing == expected.missing.count
                        && report.sizeMismatches == expected.mismatched.count)
                #expect(report.catalogFiles == catalogued.count)
                #expect(report.isConsistent == (expected == Expected()))
            }
        }
    }
}

extension StoreCheck.Report {
    var isConsistent: Bool { orphans == 0 && missing == 0 && sizeMismatches == 0 }
}
