import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// `cairn store copy` as a real process against the suite's SeaweedFS.
@Suite struct StoreCopyCommandTests {
    @Test func aLibraryIsCopiedOnceAndACopyAfterALossSendsOnlyWhatIsMissing() async throws {
        let library = try ImportedLibrary(files: ["a.jpg", "b.jpg", "c/d.jpg"])
        let environment = try TestS3.environment()
        let location = try TestS3.freshLocation()
        let local = FolderStore(root: library.root)
        let files = try await local.list(prefix: "", after: nil, limit: 10_000)
            .filter { ["originals", "sidecars", "derived", "tapes"].contains($0.key.text.split(separator: "/").first.map(String.init)) }
        #expect(files.count >= 6)  // three originals, their thumbnails and previews

        let first = try library.cairn(["store", "copy", "--to", location], environment: environment)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("Copied \(files.count) file(s)"), "\(first.standardOutput)")

        let store = try S3Store(settings: try S3Settings.resolve(location, environment: environment))
        for file in files {
            #expect(try await store.size(of: file.key) == file.size, "\(file.key)")
        }
        let again = try library.cairn(["store", "copy", "--to", location], environment: environment)
        #expect(again.standardOutput.contains("Copied 0 file(s)"), "\(again.standardOutput)")
        #expect(again.standardOutput.contains("\(files.count) were there already"))

        let lost = files[0].key
        try await store.delete(lost)
        let mended = try library.cairn(["store", "copy", "--to", location], environment: environment)
        #expect(mended.standardOutput.contains("Copied 1 file(s)"), "\(mended.standardOutput)")
        #expect(try await store.read(lost, range: nil)
                    == Array(try Data(contentsOf: URL(fileURLWithPath: library.root + "/" + lost.text))))
        await store.close()
    }

    @Test func refusedCredentialsStopTheCopyWithAMessageThatHoldsNoSecret() throws {
        let library = try ImportedLibrary(files: ["a.jpg"])
        var environment = try TestS3.environment()
        environment["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-\(UUID().uuidString)"
        let result = try library.cairn(["store", "copy", "--to", try TestS3.freshLocation()], environment: environment)
        #expect(result.status == 1)  // the store cannot be used at all: the first listing is refused
        #expect(result.standardError.contains("refused the credentials"), "\(result.standardError)")
        #expect(!result.standardError.contains(environment["AWS_SECRET_ACCESS_KEY"]!))
        #expect(!result.standardOutput.contains(environment["AWS_ACCESS_KEY_ID"]!))
        #expect(!result.standardError.contains(environment["AWS_ACCESS_KEY_ID"]!))

        let usage = try library.cairn(["store", "copy", "--to", "/not/s3"], environment: environment)
        #expect(usage.status == 64)
        #expect(usage.standardError.contains("s3://BUCKET"))
    }
}
