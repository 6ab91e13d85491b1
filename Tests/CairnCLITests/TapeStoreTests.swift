import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `cairn tape build` in a library whose files are in a store (the suite's SeaweedFS): the clips are made from
/// the store's originals, which leave the folder again; each clip is kept in the store too, so a build in a folder
/// that lost its tapes takes them from there instead of encoding them again; `tape remove` deletes them there.
@Suite struct TapeStoreTests {
    @Test func aTapeIsBuiltFromTheStoresOriginalsAndItsClipsAreKeptThere() async throws {
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let (folder, root) = try TapeCommandTests.library(importing: ["--store", location], environment: environment)
        #expect(StoreImportTests.mediaFiles(in: root).isEmpty)

        let build = try CairnBinary.run(["tape", "build", "trip", "--library", root, "--json"], environment: environment)
        #expect(build.status == 0, "\(build.standardOutput)\(build.standardError)")
        let finished = try #require(TapeCommandTests.finished(try TapeCommandTests.events(build.standardOutput)))
        #expect(finished["encoded"] as? Int == 4, "\(finished)")
        try TapeCommandTests.decodesWithoutError(root + "/tapes/trip/playlist.m3u8")
        // The originals read for the clips left the folder again.
        #expect(StoreImportTests.mediaFiles(in: root).isEmpty, "\(StoreImportTests.mediaFiles(in: root))")
        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        let clips = try await store.list(prefix: "tapes/.clips/", after: nil, limit: 1000)
        #expect(clips.filter { $0.key.text.hasSuffix("/clip.m3u8") }.count == 4, "\(clips.map(\.key))")

        // A folder that lost its tapes (or another folder of the library) takes the clips from the store.
        try FileManager.default.removeItem(atPath: root + "/tapes")
        let again = try CairnBinary.run(["tape", "build", "trip", "--library", root, "--json"], environment: environment)
        #expect(again.status == 0, "\(again.standardOutput)\(again.standardError)")
        let rebuilt = try #require(TapeCommandTests.finished(try TapeCommandTests.events(again.standardOutput)))
        #expect(rebuilt["encoded"] as? Int == 0, "\(rebuilt)")
        #expect(rebuilt["reused"] as? Int == 4, "\(rebuilt)")
        try TapeCommandTests.decodesWithoutError(root + "/tapes/trip/playlist.m3u8")

        let removed = try CairnBinary.run(["tape", "remove", "trip", "--library", root], environment: environment)
        #expect(removed.status == 0, "\(removed.standardOutput)\(removed.standardError)")
        #expect(try await store.list(prefix: "tapes/", after: nil, limit: 10).isEmpty)
        for output in [build, again, removed] {
            #expect(!(output.standardOutput + output.standardError).contains(environment["AWS_SECRET_ACCESS_KEY"]!))
        }
        await store.close()
        withExtendedLifetime(folder) {}
    }
}
