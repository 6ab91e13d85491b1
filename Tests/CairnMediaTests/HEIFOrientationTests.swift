import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// Issue 30: HEIF and AVIF shown as Pillow with pillow-heif shows them (libheif 1.23), though cairn decodes with
/// libheif 1.15: the transformations of the primary image alone, in the file's order, EXIF orientation ignored;
/// files libheif 1.15 refuses whole still give their primary image.
@Suite("HEIF orientation")
struct HEIFOrientationTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory(prefix: "cairn-heif-orientation") }

    /// A landscape test card and a quarter-size copy of it, encoded by heif-enc.
    func pictures() throws -> (full: HEIFBuilder.Picture, small: HEIFBuilder.Picture) {
        let full = folder.subpath("card.jpg"), small = folder.subpath("card-small.jpg")
        try ExternalTool.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=384x256", "-frames:v", "1", full])
        try ExternalTool.run(["ffmpeg", "-v", "error", "-y", "-i", full, "-vf", "scale=96:64", small])
        return (try HEIFBuilder.picture(of: full, scratch: folder.subpath("card.heic")),
                try HEIFBuilder.picture(of: small, scratch: folder.subpath("card-small.heic")))
    }

    /// cairn's probe gives Pillow's displayed size, and its thumbnail looks like Pillow's rendering.
    func expectSameAsPillow(_ path: String, engine: MediaEngine = MediaEngine(), maxDifference: Double = 8,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let reference = try PillowReference.render(path, to: folder.subpath("\(name)-pillow.png"))
        let pillow = try MediaFixtures.rgbPixels(of: reference)
        let probe = try engine.probe(path: path)
        #expect(probe.width == pillow.width && probe.height == pillow.height,
                "\(name): cairn \(probe.width ?? 0)x\(probe.height ?? 0), Pillow \(pillow.width)x\(pillow.height)",
                sourceLocation: sourceLocation)
        let thumbnail = try engine.renderThumbnail(source: path, kind: .photo, to: folder.subpath("\(name).webp"))
        #expect((thumbnail.width > thumbnail.height) == (pillow.width > pillow.height), "\(name)", sourceLocation: sourceLocation)
        let difference = try StillFixtures.meanDifference(thumbnail.path, reference)
        #expect(difference < maxDifference, "\(name): mean difference \(difference)", sourceLocation: sourceLocation)
    }

    @Test func transformationsApplyInTheFilesOrderWhereverTheSizeIsListed() throws {
        let card = try pictures().full
        let layouts: [(String, [[UInt8]])] = [
            ("turn-then-mirror", [card.hvcC, card.ispe, HEIFBuilder.irot(1), HEIFBuilder.imir(0)]),
            ("mirror-then-turn", [card.hvcC, card.ispe, HEIFBuilder.imir(1), HEIFBuilder.irot(3)]),
            // As Sony and Canon .HIF list it: libheif 1.15 reports the stored size but turns the pixels.
            ("turn-before-size", [card.hvcC, HEIFBuilder.irot(1), card.ispe]),
            ("turn-mirror-before-size", [card.hvcC, HEIFBuilder.irot(3), HEIFBuilder.imir(0), card.ispe]),
        ]
        for (name, properties) in layouts {
            var builder = HEIFBuilder()
            builder.items = [.init(properties: properties, data: card.data)]
            let path = folder.subpath("\(name).heic")
            try builder.write(to: path)
            try expectSameAsPillow(path)
        }
    }

    /// An Android-like file: no transformation on the primary image, an EXIF orientation of 6, and a thumbnail
    /// that carries a quarter turn of its own. Neither turns the primary image.
    @Test func anotherItemsTurnAndTheEXIFOrientationLeaveThePrimaryAsStored() throws {
        let (card, small) = try pictures()
        var builder = HEIFBuilder()
        builder.items = [
            .init(properties: [card.hvcC, card.ispe], data: card.data),
            .init(properties: [small.hvcC, small.ispe, HEIFBuilder.irot(1)], data: small.data),
            .init(type: "Exif", properties: [], data: HEIFBuilder.exif(orientation: 6), hidden: true),
        ]
        builder.references = [("thmb", 2, [1]), ("cdsc", 3, [1])]
        let path = folder.subpath("android.heic")
        try builder.write(to: path)
        try expectSameAsPillow(path)
        let probe = try MediaEngine().probe(path: path)
        #expect(probe.width == 384 && probe.height == 256)

        // Asked for a thumbnail its embedded one can serve, cairn turns that one back to the primary's shape.
        var configuration = MediaConfiguration()
        configuration.thumbnailShortSide = 32
        // A 96x64 copy shown at 32 px is blurrier than Pillow's full decode; a wrong turn or flip measures 45 and more.
        try expectSameAsPillow(path, engine: MediaEngine(configuration: configuration), maxDifference: 20)
    }

    /// An iPhone's depth map, HDR gain map and mattes: an auxiliary image that refers to several images makes
    /// libheif 1.15 refuse the whole file ("Too many auxiliary image references"); its primary image still comes out.
    @Test func auxiliaryImageReferringToSeveralImagesDoesNotHideThePrimary() throws {
        let (card, small) = try pictures()
        var builder = HEIFBuilder()
        builder.items = [
            .init(properties: [card.hvcC, card.ispe, HEIFBuilder.irot(3)], data: card.data),
            .init(properties: [small.hvcC, small.ispe, HEIFBuilder.irot(3)], data: small.data),
            .init(properties: [small.hvcC, small.ispe, HEIFBuilder.auxC("urn:com:apple:photo:2020:aux:hdrgainmap")],
                  data: small.data, hidden: true),
        ]
        builder.references = [("thmb", 2, [1]), ("auxl", 3, [1, 2])]
        let path = folder.subpath("iphone-aux.heic")
        try builder.write(to: path)
        // libheif 1.15's own tool refuses it: the file reproduces the failure.
        #expect(throws: ExternalTool.Failure.self) { try ExternalTool.run(["heif-info", path]) }
        try expectSameAsPillow(path)
    }

    /// Real files: a Sony A7 IV .HIF (`irot` before `ispe`), an AVIF turned and mirrored, a file whose `pitm` names
    /// a thumbnail, and one whose second image is cut off by the end of the file (libheif 1.15 refuses it whole).
    @Test(arguments: ["sony-a7iv-irot-first.hif", "rot1mir0.avif", "pitm-names-a-thumbnail.heic", "second-image-cut-short.heic"])
    func realFilesAsPillowShowsThem(name: String) throws {
        try expectSameAsPillow(StillFixtures.committed(name))
    }

    @Test func aFileWhosePrimaryImageIsCutShortIsStillRefusedWithLibheifsReason() throws {
        _ = try pictures()  // heif-enc's card.heic: meta first, then its one image's data
        let source = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.subpath("card.heic"))))
        let cut = folder.subpath("cut.heic")
        try Data(source.prefix(source.count * 3 / 4)).write(to: URL(fileURLWithPath: cut))
        var failure: MediaError?
        do { _ = try MediaEngine().renderThumbnail(source: cut, kind: .photo, to: folder.subpath("cut.webp")) } catch { failure = error }
        let error = try #require(failure)
        #expect(error.category == .corrupt && error.reason.contains("outside of file bounds"), "\(error)")
    }

    @Test func orientationsComposeAsTurnsDo() {
        #expect(Orientation.rotate90.then(.rotate90) == .rotate180)
        #expect(Orientation.rotate270.then(.flipVertical) == .transpose)  // Pillow's rot1mir0.avif: orientation 5
        for orientation in Orientation.allCases {
            #expect(orientation.then(orientation.inverse) == .identity)
        }
    }
}
