import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// One real file per format family, from other projects' test data (Tests/Fixtures/stills/SOURCES.md);
/// sizes as Pillow (with pillow-heif) and LibRaw report them.
@Suite("Real stills")
struct RealStillTests {
    let folder: TemporaryDirectory
    let engine = MediaEngine()
    init() throws { folder = try TemporaryDirectory(prefix: "cairn-real-stills") }

    /// The probe's displayed size, and a thumbnail that decodes back at the size the renderer reported.
    private func probeAndThumbnail(_ name: String) throws -> (probe: MediaProbe, thumbnail: RenderedImage) {
        let path = StillFixtures.committed(name)
        let probe = try engine.probe(path: path)
        let thumbnail = try engine.renderDerivatives(source: path, kind: .photo, thumbnail: folder.subpath("\(name).webp"),
                                                     preview: folder.subpath("\(name)-preview.jpg")).thumbnail
        let decoded = try MediaFixtures.rgbPixels(of: thumbnail.path)
        #expect(decoded.width == thumbnail.width && decoded.height == thumbnail.height)
        return (probe, thumbnail)
    }

    @Test(arguments: [("lab.tif", 10, 10), ("hopper_bigtiff.tif", 128, 128), ("rot1mir0.avif", 640, 427),
                      ("pil_sample_cmyk.jpg", 100, 100), ("iphone-display-p3.jpg", 56, 70),
                      ("sony-a7iv-irot-first.hif", 4672, 7008)])
    func probesAtPillowsSizeAndGetsAThumbnail(name: String, width: Int, height: Int) throws {
        let (probe, thumbnail) = try probeAndThumbnail(name)
        #expect(probe.kind == .photo)
        #expect(probe.width == width && probe.height == height)
        // Small pictures are never enlarged; the thumbnail keeps the displayed aspect.
        #expect((thumbnail.width >= thumbnail.height) == (width >= height))
    }

    @Test func labTIFFIsConvertedNotShownAsRawNumbers() throws {
        let (_, thumbnail) = try probeAndThumbnail("lab.tif")
        // Pillow's lab.tif is a mid-grey-ish swatch; shown as raw L*a*b* bytes it would be far from neutral.
        let image = try MediaFixtures.rgbPixels(of: thumbnail.path)
        let r = Int(image.rgb[0]), g = Int(image.rgb[1]), b = Int(image.rgb[2])
        #expect(abs(r - g) < 40 && abs(g - b) < 40, "\(r) \(g) \(b)")
    }

    @Test func displayP3PhotoIsConvertedToSRGBLikeVips() throws {
        let source = StillFixtures.committed("iphone-display-p3.jpg")
        let probe = try engine.probe(path: source)
        #expect(probe.colourProfile == "Display P3")
        #expect(probe.cameraMake == "Apple" && probe.cameraModel == "iPhone 14 Pro Max")
        let thumbnail = try engine.renderThumbnail(source: source, kind: .photo, to: folder.subpath("p3.webp"))
        let reference = try StillFixtures.vipsReference(of: source, longSide: max(thumbnail.width, thumbnail.height),
                                                        at: folder.subpath("p3-vips.png"))
        #expect(try StillFixtures.meanDifference(thumbnail.path, reference) < 4)
    }

    /// With no profile in the file there is no colorimetry to follow: cairn converts as libjpeg-turbo's own
    /// djpeg (and Pillow) do, with Adobe's inverted samples; vips would assume a press profile of its own.
    @Test func realAdobeCMYKPhotoWithoutAProfileLooksLikeDjpeg() throws {
        let source = StillFixtures.committed("pil_sample_cmyk.jpg")
        let thumbnail = try engine.renderThumbnail(source: source, kind: .photo, to: folder.subpath("cmyk.webp"))
        let reference = folder.subpath("cmyk-djpeg.ppm")
        try ExternalTool.run(["djpeg", "-pnm", "-outfile", reference, source])
        #expect(try StillFixtures.meanDifference(thumbnail.path, reference) < 4)
    }

    @Test func avifWithIrotAndImirIsUpright() throws {
        // Pillow reports 640x427 after the file's rotation and mirror; libheif applies both when decoding.
        let (probe, thumbnail) = try probeAndThumbnail("rot1mir0.avif")
        #expect(probe.container == "avif" && probe.streams.first?.codec == "av1")
        #expect(thumbnail.width > thumbnail.height)
    }

    @Test func metadataOnlyRawProbesAtItsSensorSizeAndFailsToRenderWithAReason() throws {
        let source = StillFixtures.committed("canon-350d-metadata-only.dng")
        let probe = try engine.probe(path: source)
        #expect(probe.container == "raw")
        #expect(probe.width == 3474 && probe.height == 2314)  // as rawpy (LibRaw) reports it
        #expect(probe.cameraMake == "Canon" && probe.cameraModel == "EOS 350D")
        var failure: MediaError?
        do { _ = try engine.renderThumbnail(source: source, kind: .photo, to: folder.subpath("raw.webp")) } catch {
            failure = error
        }
        let error = try #require(failure)
        #expect(error.reason.hasPrefix("camera RAW with no usable image"))
        #expect(error.category == .unsupported && !error.isRetryable)
    }

    /// A whole camera RAW (Canon EOS 30D, 3522x2348 as LibRaw reports it) with a 1728x1152 embedded preview.
    @Test func realRawGetsItsPictureFromTheEmbeddedPreviewAtItsSensorSize() throws {
        let source = StillFixtures.committed("canon-eos-30d.cr2")
        let probe = try engine.probe(path: source)
        #expect(probe.container == "raw" && probe.width == 3522 && probe.height == 2348)
        #expect(probe.cameraMake == "Canon" && probe.cameraModel == "EOS 30D")
        #expect(probe.captureTime?.local == "2009-07-21T13:03:20")
        let rendered = try engine.renderDerivatives(source: source, kind: .photo, thumbnail: folder.subpath("cr2.webp"),
                                                    preview: folder.subpath("cr2.jpg"))
        // Not the 160 px IFD0 thumbnail: the preview is the camera's 1728x1152 JPEG (a half-size demosaic would
        // be 1761x1174), never enlarged to 1440 on its short side.
        #expect(rendered.thumbnail.width == 375 && rendered.thumbnail.height == 250)
        #expect(rendered.preview?.width == 1728 && rendered.preview?.height == 1152)
        // A daylight landscape (rawpy's half-size render averages 117): neither black nor flat.
        let pixels = try MediaFixtures.rgbPixels(of: rendered.thumbnail.path).rgb
        let mean = Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
        let spread = (Double(pixels.reduce(0) { $0 + (Int($1) - Int(mean)) * (Int($1) - Int(mean)) }) / Double(pixels.count)).squareRoot()
        #expect(mean > 70 && mean < 190, "mean \(mean)")
        #expect(spread > 25, "spread \(spread)")
    }

    /// kimageformats' orientation set: the same picture stored turned, with the codestream's orientation 6.
    @Test func jpegXLIsTurnedByItsCodestreamOrientation() throws {
        let turned = StillFixtures.committed("jxl-orientation6.jxl")
        let probe = try engine.probe(path: turned)
        #expect(probe.container == "jxl" && probe.orientation == Orientation(exifValue: 6))
        #expect(probe.streams.first?.width == 160 && probe.streams.first?.height == 480)
        #expect(probe.width == 480 && probe.height == 160)
        let upright = try engine.renderThumbnail(source: StillFixtures.committed("jxl-orientation1.jxl"), kind: .photo,
                                                 to: folder.subpath("o1.webp"))
        let thumbnail = try engine.renderThumbnail(source: turned, kind: .photo, to: folder.subpath("o6.webp"))
        #expect(thumbnail.width == upright.width && thumbnail.height == upright.height)
        #expect(try StillFixtures.meanDifference(thumbnail.path, upright.path) < 4)
    }

    @Test func jpegXLExifBoxGivesCameraAndDate() throws {
        let probe = try engine.probe(path: StillFixtures.committed("nikon-d1x-reagan.jxl"))
        #expect(probe.width == 200 && probe.height == 130)
        #expect(probe.cameraMake == "NIKON CORPORATION" && probe.cameraModel == "NIKON D1X")
        #expect(probe.captureTime?.local?.hasPrefix("2004-06-21T23:37:53") == true)
    }

    /// Files FFmpeg's decoders refuse, read by gdk-pixbuf (BMP, PNG) or by libtiff's scanlines (32-bit floats).
    @Test(arguments: [("bmp-v5-rgb32h52.bmp", 127, 64), ("png-empty-iccp.png", 57, 57), ("float32-phase.tiff", 128, 128)])
    func stillsFFmpegRefusesStillGetAThumbnail(name: String, width: Int, height: Int) throws {
        let (probe, thumbnail) = try probeAndThumbnail(name)
        #expect(probe.kind == .photo && probe.width == width && probe.height == height)
        #expect(thumbnail.width == width && thumbnail.height == height)
        // Each has a picture on it, not one flat colour.
        let pixels = try MediaFixtures.rgbPixels(of: thumbnail.path).rgb
        #expect(Set(pixels).count > 16)
    }
}
