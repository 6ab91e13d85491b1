import CairnTesting
import Foundation
import Testing

/// Issue 60: Immich refuses a whole delete or restore batch for one id it will not let the key touch (purged
/// from its trash, or in the Locked Folder). One such asset must never block the others, run after run.
@Suite struct ImmichVanishedAssetTests {
    typealias Fixture = ImmichDestinationTests.Fixture

    /// The run id a sync's plain output names ("run ID started").
    static func runID(_ output: String) throws -> String {
        try #require(output.split(separator: "\n").first { $0.contains("run ") && $0.contains("started") }
            .flatMap { $0.split(separator: " ").last.map { String($0.dropLast()) } })
    }

    @Test func aPurgedAndALockedAssetAreSettledAndEveryOtherDeletionReachesTheTrash() async throws {
        let fixture = try Fixture()
        // Twelve, five of which leave the source: under the rail that holds a mass vanishing.
        try fixture.writeDistinctJPEGs(12, prefix: "P")
        #expect(try fixture.sync().status == 0)
        var ids: [String: String] = [:], sha1: [String: String] = [:]
        let state0 = try await fixture.double.state()
        for index in 0..<12 {
            sha1["P\(index)"] = try fixture.sha1("P\(index).JPG")
            ids["P\(index)"] = try #require(state0.assets(withChecksum: sha1["P\(index)"]!).first?.id)
        }
        let gone = sha1["P0"]!, locked = sha1["P1"]!
        // In Immich: P0 deleted and the trash emptied, P1 moved to the Locked Folder.
        try await fixture.double.purge(assetIDs: [ids["P0"]!])
        try await fixture.double.lock(assetIDs: [ids["P1"]!])
        for index in 0..<5 { try FileManager.default.removeItem(atPath: fixture.folder.subpath("src/P\(index).JPG")) }

        _ = try fixture.sync(["--apply-deletions"])
        let trashed = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        let output = trashed.standardOutput + trashed.standardError
        #expect(trashed.status == 0, "only settled ids: the run did its job\n\(output)")
        #expect(output.contains("moved 3 assets to Immich's trash"), "\(output)")
        #expect(output.contains("P0.JPG: already gone from the destination"), "\(output)")
        #expect(output.contains("P1.JPG: in the destination's Locked Folder"), "\(output)")
        let runID = try Self.runID(trashed.standardOutput)
        let state = try await fixture.double.state()
        for index in 2..<5 {
            let asset = try #require(state.assets.first { $0.id == ids["P\(index)"] })
            #expect(asset.isTrashed && asset.tags.contains("cairn/v1/run/\(runID)"), "P\(index)")
        }
        #expect(state.assets(withChecksum: gone).isEmpty)
        #expect(state.assets(withChecksum: locked).first?.isTrashed == false)
        #expect(state.assets.filter(\.isTrashed).count == 3 && state.forceDeletes == 0)

        // Settled for good: the next sync sends no deletion and reports nothing again.
        let next = try fixture.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(next.status == 0, "\(next.standardOutput)\(next.standardError)")
        #expect(!(next.standardOutput + next.standardError).contains("settled"), "\(next.standardOutput)")

        // Immich's trash partly emptied: the restore brings back what is there and names what is not.
        try await fixture.double.purge(assetIDs: [ids["P2"]!])
        let restore = try fixture.cairn(["restore", "--run-id", runID])
        #expect(restore.status == 3, "\(restore.standardOutput)\(restore.standardError)")
        #expect(restore.standardOutput.contains("Restored 2 asset(s)"), "\(restore.standardOutput)")
        #expect(restore.standardOutput.contains("not restored \(sha1["P2"]!): Immich purged it"))
        #expect(restore.standardOutput.contains("not restored \(gone): Immich purged it"))
        let back = try await fixture.double.state()
        #expect(back.assets.allSatisfy { !$0.isTrashed })
        for index in 3..<5 { #expect(back.assets.contains { $0.id == ids["P\(index)"] }, "P\(index) restored") }
    }
}

/// Issue 60: a Live Photo link that fails (Immich down while the still is being linked) stops nothing else, is
/// reported, and is made by the next run.
@Suite struct ImmichLivePhotoLinkTests {
    @Test func aFailedLinkIsTriedAgainByTheNextRun() async throws {
        let fixture = try ImmichDestinationTests.Fixture(faults: ImmichDouble.Faults(
            status500: 1, paths: ["/api/assets/*"], methods: ["PUT"]))
        try MediaFixtures.livePhoto(in: fixture.source, stem: "IMG_0001")
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/OTHER.JPG"), width: 64, height: 48)
        let first = try fixture.sync(["--album", "Kept"])
        let output = first.standardOutput + first.standardError
        #expect(first.status == 0, "\(output)")
        #expect(output.contains("1 Live Photo link not made at the destination; the next run tries again"), "\(output)")
        // The failed link stopped neither the album nor the rest of the run.
        var state = try await fixture.double.state()
        // (A Live Photo's movie stays out of albums: it shows through its still.)
        #expect(state.assets.count == 3 && state.assets.filter { $0.albums == ["Kept"] }.count == 2,
                "\(state.assets.map(\.albums))")
        #expect(state.assets.allSatisfy { $0.livePhotoVideoId == nil })

        try await fixture.double.setFaults(ImmichDouble.Faults())
        let second = try fixture.sync()
        #expect(second.status == 0, "\(second.standardOutput)\(second.standardError)")
        state = try await fixture.double.state()
        let still = try #require(state.assets.first { $0.originalFileName == "IMG_0001.JPG" })
        let movie = try #require(state.assets.first { $0.originalFileName == "IMG_0001.MOV" })
        #expect(still.livePhotoVideoId == movie.id && movie.visibility == "hidden")
        // Linked once: a third run asks nothing more of it.
        let third = try fixture.sync()
        #expect(!(third.standardOutput + third.standardError).contains("Live Photo link"), "\(third.standardOutput)")
    }
}
