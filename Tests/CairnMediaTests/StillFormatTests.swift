import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// Stills outside FFmpeg's reach or speed: HEIC/AVIF (libheif), CMYK and profiled JPEGs (libjpeg-turbo,
/// lcms2), animated WebP (libwebp); each made at test time by its own format's tools.
@Suite("Still formats")
struct StillFormatTests {
    let fixtures: Fixtures
    let folder: TemporaryDirectory
    let engine = MediaEngine()

    init() throws {
        fixtures = try Fixtures.shared()
        folder = try TemporaryDirectory(prefix: "cairn-stills")
    }

    /// The red-left, blue-right 320x240 JPEG with EXIF (orientation 1), as a HEIC or AVIF.
    private func redBlueHEIF(avif: Bool) throws -> String {
        let jpeg = try MediaFixtures.jpegWithExif(at: folder.subpath("rb.jpg"), orientation: 1)
        return try StillFixtures.heif(from: jpeg, at: folder.subpath(avif ? "rb.avif" : "rb.heic"), avif: avif)
    }

    @Test(arguments: [false, true])
    func heifProbesWithItsSizeCodecDateAndCamera(avif: Bool) throws {
        let probe = try engine.probe(path: try redBlueHEIF(avif: avif))
        #expect(probe.kind == .photo)
        #expect(probe.container == (avif ? "avif" : "heif"))
        #expect(probe.streams.first?.codec == (avif ? "av1" : "hevc"))
        #expect(probe.width == 320 && probe.height == 240)
        let fields = ExifFields()
        #expect(probe.cameraMake == fields.make && probe.cameraModel == fields.model)
        #expect(probe.captureDate == CaptureDateParser.parse(fields.dateTimeOriginal))
        #expect(probe.gps != nil)
    }

    /// A still held in memory (an archive's entry on its way to Immich) is probed as its file is; what needs a file
    /// (a HEIC) is left to the file's probe.
    @Test func aJPEGOrPNGInMemoryProbesAsItsFileDoes() throws {
        var exif = ExifFields()
        exif.orientation = 6
        let jpeg = try MediaFixtures.jpegWithExif(at: folder.subpath("m.jpg"), width: 320, exif: exif)
        let png = try MediaFixtures.pngWithAlpha(at: folder.subpath("m.png"))
        for path in [jpeg, png] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let inMemory = try #require(try engine.probeStill(bytes: bytes, name: URL(fileURLWithPath: path).lastPathComponent))
            #expect(inMemory == (try engine.probe(path: path)), "\(path)")
        }
        let fromMemory = try #require(try engine.probeStill(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: jpeg))), name: "m.jpg"))
        #expect(fromMemory.width == 240 && fromMemory.height == 320 && fromMemory.cameraModel == exif.model && fromMemory.gps != nil)
        let heic = try redBlueHEIF(avif: false)
        #expect(try engine.probeStill(bytes: [UInt8](Data(contentsOf: URL(fileURLWithPath: heic))), name: "rb.heic") == nil)
        #expect(throws: MediaError.self) { try engine.probeStill(bytes: [], name: "empty.jpg") }
    }

    @Test(arguments: [false, true])
    func heifGetsAThumbnailAndPreviewInItsColours(avif: Bool) throws {
        let source = try redBlueHEIF(avif: avif)
        let thumbnail = folder.subpath("rb-\(avif)-thumb.webp"), preview = folder.subpath("rb-\(avif)-preview.jpg")
        let result = try engine.renderDerivatives(source: source, kind: .photo, thumbnail: thumbnail, preview: preview)
        #expect(result.thumbnail.width == 320 && result.thumbnail.height == 240)
        #expect(result.preview?.width == 320)
        let image = try MediaFixtures.rgbPixels(of: thumbnail)
        let left = image.rgb[(120 * 320 + 40) * 3..<(120 * 320 + 40) * 3 + 3]
        let right = image.rgb[(120 * 320 + 280) * 3..<(120 * 320 + 280) * 3 + 3]
        #expect(left[left.startIndex] > 200 && left[left.startIndex + 2] < 60)
        #expect(right[right.startIndex] < 60 && right[right.startIndex + 2] > 200)
    }

    @Test func tenBitHEICIsMappedToEightBitsNotClipped() throws {
        let source = try StillFixtures.heif(from: fixtures.deepPNG, at: folder.subpath("deep.heic"), bitDepth: 10)
        let thumbnail = folder.subpath("deep-thumb.webp")
        _ = try engine.renderThumbnail(source: source, kind: .photo, to: thumbnail)
        // The gradient survives: neither all black nor all white, and close to the 16-bit original.
        let image = try MediaFixtures.rgbPixels(of: thumbnail)
        let mean = Double(image.rgb.reduce(0) { $0 + Int($1) }) / Double(image.rgb.count)
        #expect(mean > 20 && mean < 235)
        #expect(try StillFixtures.meanDifference(thumbnail, fixtures.deepPNG) < 12)
    }

    @Test func truncatedHEICFailsWithAOneLineReason() throws {
        let whole = try redBlueHEIF(avif: false)
        let cut = try StillFixtures.truncated(whole, at: folder.subpath("cut.heic"), fraction: 0.4)
        var failure: MediaError?
        do { _ = try engine.renderThumbnail(source: cut, kind: .photo, to: folder.subpath("cut.webp")) } catch { failure = error }
        let error = try #require(failure)
        #expect(error.file == cut)
        #expect(!error.isRetryable)
        #expect(!error.description.contains("\n"))
    }

    @Test func cmykJPEGWithItsProfileLooksLikeVipsInSRGB() throws {
        let cmyk = try StillFixtures.cmykJPEG(from: fixtures.camera, at: folder.subpath("cmyk.jpg"))
        let thumbnail = folder.subpath("cmyk-thumb.webp")
        let result = try engine.renderThumbnail(source: cmyk, kind: .photo, to: thumbnail)
        let reference = try StillFixtures.vipsReference(of: cmyk, longSide: max(result.width, result.height),
                                                        at: folder.subpath("cmyk-vips.png"))
        // Measured: 4.6 (saturated greens outside the CMYK gamut account for most of it); an inverted or
        // unconverted CMYK picture is off by over 100.
        #expect(try StillFixtures.meanDifference(thumbnail, reference) < 7)
    }

    @Test func cmykJPEGWithoutAProfileKeepsItsColours() throws {
        let jpeg = try MediaFixtures.jpegWithExif(at: folder.subpath("rb1.jpg"), orientation: 1)
        let cmyk = try StillFixtures.cmykJPEG(from: jpeg, at: folder.subpath("cmyk-bare.jpg"), stripProfile: true)
        let thumbnail = folder.subpath("cmyk-bare-thumb.webp")
        _ = try engine.renderThumbnail(source: cmyk, kind: .photo, to: thumbnail)
        let image = try MediaFixtures.rgbPixels(of: thumbnail)
        let left = image.rgb[(120 * 320 + 40) * 3..<(120 * 320 + 40) * 3 + 3]
        let right = image.rgb[(120 * 320 + 280) * 3..<(120 * 320 + 280) * 3 + 3]
        #expect(left[left.startIndex] > 180 && left[left.startIndex + 2] < 90)  // red, not its inverse
        #expect(right[right.startIndex] < 90 && right[right.startIndex + 2] > 150)
    }

    @Test func libjpegTurboAndFFmpegDecodeTheSamePicture() throws {
        var ffmpeg = MediaConfiguration()
        ffmpeg.jpegDecoder = .ffmpeg
        let fast = folder.subpath("turbo.webp"), reference = folder.subpath("ffmpeg.webp")
        let a = try engine.renderThumbnail(source: fixtures.camera, kind: .photo, to: fast)
        let b = try MediaEngine(configuration: ffmpeg).renderThumbnail(source: fixtures.camera, kind: .photo, to: reference)
        #expect(a.width == b.width && a.height == b.height)
        #expect(try StillFixtures.meanDifference(fast, reference) < 3)
    }

    @Test func animatedWebPProbesAsAnimatedAndThumbnailsItsFirstFrame() throws {
        let source = try StillFixtures.animatedWebP(at: folder.subpath("anim.webp"))
        let probe = try engine.probe(path: source)
        #expect(probe.kind == .photo && probe.animated == true)
        #expect(probe.frameCount == 2)
        #expect(probe.width == 320 && probe.height == 240)
        let thumbnail = folder.subpath("anim-thumb.webp")
        _ = try engine.renderThumbnail(source: source, kind: .photo, to: thumbnail)
        let image = try MediaFixtures.rgbPixels(of: thumbnail)
        #expect(image.rgb[0] > 200 && image.rgb[2] < 60)  // the red first frame
    }

    /// A 16-bit JPEG XL streams out of libjxl row by row and is shrunk on arrival, not held whole: the decode
    /// for a thumbnail is a power-of-two fraction of the picture, with the colours FFmpeg's libjxl wrapper gives.
    @Test func sixteenBitJPEGXLIsShrunkOnArrivalWithItsColours() throws {
        let source = folder.subpath("deep.jxl")
        try ExternalTool.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=1600x1200:rate=1",
                              "-frames:v", "1", "-pix_fmt", "rgb48le", "-c:v", "libjxl", "-distance", "1", source])
        let probe = try engine.probe(path: source)
        #expect(probe.container == "jxl" && probe.width == 1600 && probe.height == 1200)
        let picture = try PictureDecoder(configuration: MediaConfiguration()).decodeStill(path: source, targetShortSide: 250)
        #expect(picture.frame.width == 1600 / 4 && picture.frame.height == 1200 / 4)
        let thumbnail = try engine.renderThumbnail(source: source, kind: .photo, to: folder.subpath("deep.webp"))
        #expect(thumbnail.width == 333 && thumbnail.height == 250)
        // The same picture decoded whole by FFmpeg's libjxl wrapper, then thumbnailed the usual way.
        let decoded = folder.subpath("deep-ffmpeg.png")
        try ExternalTool.run(["ffmpeg", "-v", "error", "-i", source, "-pix_fmt", "rgb24", decoded])
        let reference = try engine.renderThumbnail(source: decoded, kind: .photo, to: folder.subpath("deep-ffmpeg.webp"))
        #expect(try StillFixtures.meanDifference(thumbnail.path, reference.path) < 4)
    }

    /// Progressive coefficients are held for the whole picture whatever the output scale: above the decode
    /// budget such a JPEG is kept without preview with a reason, while a baseline one of the same size decodes.
    @Test func progressiveJPEGAboveTheDecodeBudgetIsRefusedWithAReason() throws {
        let baseline = try MediaFixtures.jpegWithExif(at: folder.subpath("base.jpg"), orientation: 1)
        let progressive = folder.subpath("progressive.jpg")
        try ExternalTool.run(["jpegtran", "-progressive", "-copy", "all", "-outfile", progressive, baseline])
        var configuration = MediaConfiguration()
        configuration.maxDecodeBytes = 320 * 240 * 3 - 1
        let tight = MediaEngine(configuration: configuration)
        _ = try tight.renderThumbnail(source: baseline, kind: .photo, to: folder.subpath("base.webp"))
        var failure: MediaError?
        do { _ = try tight.renderThumbnail(source: progressive, kind: .photo, to: folder.subpath("prog.webp")) } catch {
            failure = error
        }
        let error = try #require(failure)
        #expect(error.category == .unsupported && error.reason.hasPrefix("progressive JPEG of 320x240 needs"))
        _ = try engine.renderThumbnail(source: progressive, kind: .photo, to: folder.subpath("prog-ok.webp"))
    }

    /// Content over extension: a JPEG named `.nef`, which LibRaw refuses, is probed and thumbnailed as the JPEG its
    /// bytes say it is; a file that is neither keeps LibRaw's reason.
    @Test func jpegNamedLikeARawIsReadAsAJPEG() throws {
        let jpeg = try MediaFixtures.jpegWithExif(at: folder.subpath("rb2.jpg"), orientation: 1)
        let renamed = folder.subpath("DSC_0001.nef")
        try FileManager.default.copyItem(atPath: jpeg, toPath: renamed)
        let probe = try engine.probe(path: renamed)
        #expect(probe.container == "jpeg" && probe.width == 320 && probe.height == 240)
        let thumbnail = try engine.renderThumbnail(source: renamed, kind: .photo, to: folder.subpath("nef-thumb.webp"))
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
        #expect(try StillFixtures.meanDifference(thumbnail.path, jpeg) < 4)

        let junk = folder.subpath("junk.nef")
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: junk))
        var failure: MediaError?
        do { _ = try engine.probe(path: junk) } catch { failure = error }
        #expect(try #require(failure).reason.lowercased().contains("raw"))
    }

    /// A JPEG whose frame header comes after megabytes of metadata segments (a phone's extended XMP) is sized
    /// from its own headers, walked in the file, not handed to FFmpeg's demuxer (which calls it "image2").
    @Test func jpegWithItsFrameHeaderPastTheProbeWindowIsSizedFromItsHeaders() throws {
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: try MediaFixtures.jpeg(
            at: folder.subpath("plain.jpg"), width: 320, height: 240)))
        let body = [UInt8](repeating: 0x20, count: 65_000)
        let segment = [0xFF, 0xE1, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        var padded = Data(jpeg.prefix(2))
        for _ in 0..<8 { padded.append(contentsOf: segment) }  // 520 KB, twice the probe's window
        padded.append(jpeg.dropFirst(2))
        let path = folder.subpath("xmp-heavy.jpg")
        try padded.write(to: URL(fileURLWithPath: path))
        let probe = try engine.probe(path: path)
        #expect(probe.container == "jpeg" && probe.width == 320 && probe.height == 240)
        let thumbnail = try engine.renderThumbnail(source: path, kind: .photo, to: folder.subpath("xmp-thumb.webp"))
        #expect(thumbnail.width == 320 && thumbnail.height == 240)
    }
}
