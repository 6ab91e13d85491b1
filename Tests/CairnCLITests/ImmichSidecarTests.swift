import CairnTesting
import Foundation
import Testing

/// Issue 60: photos with XMP sidecars (darktable, digiKam, Lightroom) arrive in Immich with their sidecars. The
/// double judges each file part as the real server does (`canUploadFile`), so an upload that sends the sidecar
/// after the `filename` field is refused there as it is by Immich.
@Suite struct ImmichSidecarTests {
    @Test func aFolderWithSidecarsBesideMostPhotosArrivesCompleteEachSidecarWithItsPhoto() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try fixture.writeDistinctJPEGs(8, prefix: "IMG_")
        var withSidecar: [String: Int] = [:]
        for index in 0..<6 {
            let xmp = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF/></x:xmpmeta>"# + String(repeating: " ", count: index)
            // Both namings in use: darktable's IMG.JPG.xmp, Lightroom's IMG.xmp.
            let name = index.isMultiple(of: 2) ? "IMG_\(index).JPG.xmp" : "IMG_\(index).xmp"
            try xmp.write(toFile: fixture.folder.subpath("src/" + name), atomically: true, encoding: .utf8)
            withSidecar["IMG_\(index).JPG"] = xmp.utf8.count
        }
        let result = try fixture.sync()
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 8)
        for index in 0..<8 {
            let name = "IMG_\(index).JPG"
            let asset = try #require(state.assets(withChecksum: try fixture.sha1(name)).first, "\(name) did not arrive")
            #expect(asset.sidecarBytes == withSidecar[name] ?? 0, "\(name)")
        }
    }

    /// Immich 3.0 keeps an empty upload as an asset it cannot show, 3.1 refuses it: an empty file is not sent,
    /// and the run names it with its reason; the others arrive.
    @Test func anEmptyFileIsNotSentAndTheRunSaysWhy() async throws {
        let fixture = try ImmichDestinationTests.Fixture()
        try fixture.writeDistinctJPEGs(2, prefix: "OK_")
        FileManager.default.createFile(atPath: fixture.folder.subpath("src/EMPTY.JPG"), contents: Data())
        let result = try fixture.sync()
        #expect(result.status == 3, "\(result.standardOutput)\(result.standardError)")
        #expect((result.standardOutput + result.standardError).contains("EMPTY.JPG: empty file (0 bytes)"),
                "\(result.standardOutput)\(result.standardError)")
        let state = try await fixture.double.state()
        #expect(state.assets.count == 2 && state.assets.allSatisfy { $0.bytes > 0 })
    }
}
