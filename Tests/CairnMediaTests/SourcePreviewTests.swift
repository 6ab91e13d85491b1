import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// A library asks for no preview file when the original already is one: an upright sRGB JPEG no larger than a
/// preview. Anything a viewer would show differently (turned, other colours, CMYK) or that is larger gets its file.
@Suite("The original as its own preview")
struct SourcePreviewTests {
    let folder: TemporaryDirectory
    let engine = MediaEngine()
    init() throws { folder = try TemporaryDirectory(prefix: "cairn-source-preview") }

    private func render(_ source: String, engine: MediaEngine? = nil, allowed: Bool = true)
        throws -> (RenderedDerivatives, previewFile: String)
    {
        let name = URL(fileURLWithPath: source).lastPathComponent
        let previewFile = folder.subpath("\(name)-preview.jpg")
        let result = try (engine ?? self.engine).renderDerivatives(
            source: source, kind: .photo, thumbnail: folder.subpath("\(name)-thumb.webp"), preview: previewFile,
            sourceMayBePreview: allowed)
        return (result, previewFile)
    }

    @Test func aSmallUprightJPEGIsItsOwnPreview() throws {
        let source = try MediaFixtures.jpegWithExif(at: folder.subpath("upright.jpg"), width: 320, height: 240, orientation: 1)
        let (result, previewFile) = try render(source)
        #expect(result.previewIsSource)
        #expect(result.preview == RenderedImage(path: source, format: .jpeg, width: 320, height: 240,
                                                byteCount: Int(try FileManager.default.attributesOfItem(atPath: source)[.size] as! UInt64)))
        #expect(!FileManager.default.fileExists(atPath: previewFile))
        // The thumbnail is still made: the grid reads small WebP files, whatever the original.
        #expect(FileManager.default.fileExists(atPath: result.thumbnail.path))
    }

    @Test func aCallerThatWantsTheFileGetsIt() throws {
        let source = try MediaFixtures.jpegWithExif(at: folder.subpath("wanted.jpg"), width: 320, height: 240, orientation: 1)
        let (result, previewFile) = try render(source, allowed: false)
        #expect(!result.previewIsSource)
        #expect(result.preview?.path == previewFile)
        #expect(try MediaFixtures.rgbPixels(of: previewFile).width == 320)
    }

    @Test func aTurnedJPEGGetsAnUprightPreview() throws {
        let source = try MediaFixtures.jpegWithExif(at: folder.subpath("turned.jpg"), width: 320, height: 240, orientation: 6)
        let (result, previewFile) = try render(source)
        #expect(!result.previewIsSource)
        #expect(result.preview?.width == 240 && result.preview?.height == 320)
        #expect(try MediaFixtures.rgbPixels(of: previewFile).height == 320)
    }

    /// Real files: a phone's Display P3 JPEG and a CMYK one; both are converted to sRGB, so both get a file.
    @Test(arguments: ["iphone-display-p3.jpg", "pil_sample_cmyk.jpg"])
    func aJPEGInOtherColoursGetsAnSRGBPreview(name: String) throws {
        let (result, previewFile) = try render(StillFixtures.committed(name))
        #expect(!result.previewIsSource)
        #expect(FileManager.default.fileExists(atPath: previewFile))
    }

    @Test func aJPEGLargerThanAPreviewGetsOne() throws {
        let source = try MediaFixtures.jpegWithExif(at: folder.subpath("large.jpg"), width: 320, height: 240, orientation: 1)
        var configuration = MediaConfiguration()
        configuration.previewShortSide = 120
        let (result, previewFile) = try render(source, engine: MediaEngine(configuration: configuration))
        #expect(!result.previewIsSource)
        #expect(result.preview?.width == 160 && result.preview?.height == 120)
        #expect(FileManager.default.fileExists(atPath: previewFile))
    }

    @Test func aJPEGHeavierThanTheBudgetGetsALighterPreview() throws {
        let source = try MediaFixtures.jpegWithExif(at: folder.subpath("heavy.jpg"), width: 320, height: 240, orientation: 1)
        let bytes = Int(try FileManager.default.attributesOfItem(atPath: source)[.size] as! UInt64)
        var configuration = MediaConfiguration()
        let bitsPerPixel = Double(bytes * 8) / Double(320 * 240)
        // At this file's own bits a pixel it still fits; just under, it does not, and a preview file is written.
        configuration.sourcePreviewMaxBitsPerPixel = bitsPerPixel
        #expect(try render(source, engine: MediaEngine(configuration: configuration)).0.previewIsSource)
        configuration.sourcePreviewMaxBitsPerPixel = bitsPerPixel * 0.99
        let (result, previewFile) = try render(source, engine: MediaEngine(configuration: configuration))
        #expect(!result.previewIsSource)
        #expect(FileManager.default.fileExists(atPath: previewFile))
    }

    @Test func aJPEGNamedOtherwiseGetsAPreviewFile() throws {
        let jpeg = try MediaFixtures.jpegWithExif(at: folder.subpath("named.jpg"), width: 320, height: 240, orientation: 1)
        let source = folder.subpath("named.png")
        try FileManager.default.moveItem(atPath: jpeg, toPath: source)
        let (result, previewFile) = try render(source)
        #expect(!result.previewIsSource)
        #expect(FileManager.default.fileExists(atPath: previewFile))
    }
}
