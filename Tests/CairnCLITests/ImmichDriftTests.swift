import CairnCatalog
import CairnCore
import CairnReconcileOracle
import CairnTesting
import Foundation
import Testing

/// Issue 60: content cairn uploaded that a person later deleted in Immich (its trash) or that Immich purged is
/// seen by a check of the destination, reported, left alone by default, and brought back only when asked.
@Suite struct ImmichDriftTests {
    typealias Fixture = ImmichDestinationTests.Fixture

    @Test func trashedAndPurgedAssetsAreReportedLeftAloneAndRestoredOnlyWhenAsked() async throws {
        let fixture = try Fixture()
        try fixture.writeDistinctJPEGs(6, prefix: "D")
        #expect(try fixture.sync().status == 0)
        var ids: [String: String] = [:], sha1: [String: String] = [:]
        let uploaded = try await fixture.double.state()
        for index in 0..<6 {
            sha1["D\(index)"] = try fixture.sha1("D\(index).JPG")
            ids["D\(index)"] = try #require(uploaded.assets(withChecksum: sha1["D\(index)"]!).first?.id)
        }
        // In Immich's web app: D0 deleted (to its trash), D1 deleted and the trash emptied.
        try await fixture.double.trash([ids["D0"]!], key: ImmichDestinationTests.key)
        try await fixture.double.purge(assetIDs: [ids["D1"]!])
        // cairn's own deletion of D5 (gone from the source) is never drift.
        try FileManager.default.removeItem(atPath: fixture.folder.subpath("src/D5.JPG"))
        _ = try fixture.sync(["--apply-deletions"])
        let trashing = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashing.standardOutput.contains("moved 1 assets to Immich's trash"), "\(trashing.standardOutput)")

        // Reported, and left alone.
        let checked = try fixture.cairn(["sync", fixture.source, "--check-destination", "--json"])
        #expect(checked.status == 0, "\(checked.standardError)")
        let events = checked.standardOutput.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let drift = try #require(events.first { $0["event"] as? String == "destinationChecked" }?["drift"] as? [String: Any])
        #expect(drift["check"] as? String == "full")
        #expect(drift["trashed"] as? Int == 1 && drift["missing"] as? Int == 1, "\(drift)")
        #expect(drift["restored"] as? Int == 0 && drift["broughtInAgain"] as? Int == 0)
        var state = try await fixture.double.state()
        #expect(state.assets.first { $0.id == ids["D0"] }?.isTrashed == true)
        #expect(state.assets(withChecksum: sha1["D1"]!).isEmpty)
        let status = try CairnBinary.run(["status", "--library", fixture.library])
        #expect(status.standardOutput.contains("1 in its trash, 1 gone from it for good"), "\(status.standardOutput)")

        // A run between full checks asks only for the trash (one search) and still reports what is recorded.
        let before = try await fixture.double.requestCount()
        let quick = try fixture.sync()
        #expect(quick.status == 0)
        #expect(quick.standardOutput.contains("checked the destination's trash"), "\(quick.standardOutput)")
        #expect(try await fixture.double.requestCount() - before <= 6)

        // Asked to mend: D0 comes back from Immich's trash, D1 is uploaded again; cairn's own D5 stays trashed.
        let mended = try fixture.sync(["--destination-drift", "restore"])
        #expect(mended.status == 0, "\(mended.standardOutput)\(mended.standardError)")
        #expect(mended.standardOutput.contains("restored 1 from its trash, bringing 1 lost there in again"),
                "\(mended.standardOutput)")
        state = try await fixture.double.state()
        #expect(state.assets.first { $0.id == ids["D0"] }?.isTrashed == false)
        let again = try #require(state.assets(withChecksum: sha1["D1"]!).first)
        #expect(again.id != ids["D1"] && !again.isTrashed && state.creations[sha1["D1"]!] == 2)
        #expect(state.assets(withChecksum: try #require(sha1["D5"])).first?.isTrashed == true)

        // Mended for good: a full check finds nothing, and the catalog knows D1's new asset.
        let clean = try fixture.sync(["--check-destination"])
        #expect(clean.standardOutput.contains("checked every asset at the destination: nothing changed there"),
                "\(clean.standardOutput)")
        state = try await fixture.double.state()
        #expect(state.creations[sha1["D1"]!] == 2)
        try ImmichDestinationTests.expectNoKey(in: fixture, outputs: [checked, quick, mended, clean, status])
    }

    @Test func aDriftSettingThatIsNotKnownIsRefusedByName() throws {
        let fixture = try Fixture()
        try fixture.writeDistinctJPEGs(1, prefix: "X")
        let bad = try fixture.cairn(["sync", fixture.source, "--plain"],
                                    environment: ["CAIRN_DESTINATION_DRIFT": "undo", "CAIRN_CHECK_DESTINATION_DAYS": "3"])
        #expect(bad.status == 64)
        #expect(bad.standardError.contains("CAIRN_DESTINATION_DRIFT") && bad.standardError.contains("undo"), "\(bad.standardError)")
        let zone = try fixture.cairn(["sync", fixture.source, "--plain", "--time-zone", "Mars/Olympus"])
        #expect(zone.status == 64 && zone.standardError.contains("Mars/Olympus"), "\(zone.standardError)")
    }

    /// 100,000 assets cairn believes it uploaded: a sync with nothing new and no full check due asks the server
    /// six things; a full check of all of them stays under 25 requests.
    @Test func aLargeLibraryIsCheckedInAFewRequests() async throws {
        let fixture = try Fixture()
        try fixture.writeDistinctJPEGs(1, prefix: "L")
        #expect(try fixture.sync().status == 0)
        let count = 100_000
        let checksums = (0..<count).map { index in
            var bytes = [UInt8](repeating: 0, count: 20)
            withUnsafeBytes(of: UInt64(index + 1).bigEndian) { bytes.replaceSubrange(12..<20, with: $0) }
            bytes[0] = 0xC4
            return Checksum(bytes: bytes)!
        }
        let ids = try await fixture.double.seed(checksums: checksums.map(\.hex), userName: "tester")
        let states = FileManager.default.subpaths(atPath: fixture.library + "/immich") ?? []
        let catalogPath = try #require(states.first { $0.hasSuffix("/catalog.sqlite") })
        let catalog = try SQLiteCatalog(path: fixture.library + "/immich/" + catalogPath)
        try await catalog.insertAssets(zip(checksums, ids).map { checksum, id in
            AssetRecord(checksum: checksum, kind: .photo, size: 1, originalExtension: "jpg",
                        firstSourcePath: "old/\(checksum.hex).jpg", originalPath: "", remoteID: id, importedAt: Date(),
                        runID: nil)
        })
        catalog.close()

        var before = try await fixture.double.requestCount()
        let full = try fixture.sync(["--check-destination"])
        #expect(full.status == 0, "\(full.standardOutput)\(full.standardError)")
        #expect(full.standardOutput.contains("checked every asset at the destination: nothing changed there"))
        let fullRequests = try await fixture.double.requestCount() - before
        #expect(fullRequests < 25, "\(fullRequests) requests for a full check of \(count) assets")

        before = try await fixture.double.requestCount()
        let quiet = try fixture.sync()
        #expect(quiet.status == 0)
        let quietRequests = try await fixture.double.requestCount() - before
        #expect(quietRequests <= 6, "\(quietRequests) requests for a sync of \(count) assets with nothing new")
        print("requests for \(count) assets: full check \(fullRequests), sync with nothing new \(quietRequests)")
    }
}
