import CairnCore
import CairnTesting
import Foundation
import Testing
@testable import CairnMedia

/// Media fixtures shared by the engine suites, made once per suite with the ffmpeg CLI.
final class Fixtures: @unchecked Sendable {
    let folder: TemporaryDirectory
    let exifJPEG: String
    let camera: String
    let video: String
    let rotatedVideo: String
    let alphaPNG: String
    let deepPNG: String

    init() throws {
        folder = try TemporaryDirectory(prefix: "cairn-media")
        exifJPEG = try MediaFixtures.jpegWithExif(at: folder.subpath("exif6.jpg"))
        camera = try MediaFixtures.jpeg(at: folder.subpath("camera.jpg"), width: 2000, height: 1500)
        video = try MediaFixtures.video(at: folder.subpath("video.mp4"))
        rotatedVideo = try MediaFixtures.rotatedPhoneVideo(at: folder.subpath("phone.mp4"))
        alphaPNG = try MediaFixtures.pngWithAlpha(at: folder.subpath("alpha.png"))
        deepPNG = try MediaFixtures.png16(at: folder.subpath("deep.png"))
    }

    func out(_ name: String) -> String { folder.subpath(name) }

    /// Made once for every suite (making media with the ffmpeg CLI is the slow part of these tests).
    private static let made = Result { try Fixtures() }
    static func shared() throws -> Fixtures { try made.get() }
}

/// Slots written from several threads at once, one slot per thread.
final class ConcurrentResults: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Int]
    init(count: Int) { storage = Array(repeating: 0, count: count) }
    func set(_ index: Int, _ value: Int) { lock.withLock { storage[index] = value } }
    var values: [Int] { lock.withLock { storage } }
}

/// Whether an RGB pixel is clearly red / blue.
private func isRed(_ p: ArraySlice<UInt8>) -> Bool { p[p.startIndex] > 200 && p[p.startIndex + 2] < 60 }
private func isBlue(_ p: ArraySlice<UInt8>) -> Bool { p[p.startIndex] < 60 && p[p.startIndex + 2] > 200 }
private func pixel(_ image: (width: Int, height: Int, rgb: [UInt8]), _ x: Int, _ y: Int) -> ArraySlice<UInt8> {
    let at = (y * image.width + x) * 3
    return image.rgb[at..<(at + 3)]
}

@Suite("Probe")
struct ProbeTests {
    let fixtures: Fixtures
    let engine = MediaEngine()
    init() throws { fixtures = try Fixtures.shared() }

    @Test func stillWithExifReportsDisplayedSizeDateCameraAndPlace() throws {
        let probe = try engine.probe(path: fixtures.exifJPEG)
        #expect(probe.kind == .photo)
        #expect(probe.container == "jpeg")
        #expect(probe.streams.map(\.codec) == ["mjpeg"])
        #expect(probe.width == 240 && probe.height == 320)
        #expect(probe.orientation == .rotate90)
        #expect(probe.captureDate == CaptureDateParser.parse("2020:02:29 13:14:15"))
        #expect(probe.cameraMake == "Cairn" && probe.cameraModel == "Test Camera 1")
        #expect(probe.gps.map { abs($0.latitude - 48.8584) < 0.001 } == true)
        #expect(probe.durationSeconds == nil && !probe.hasAudio)
    }

    @Test func videoReportsStreamsDurationRateAndCreationTime() throws {
        let probe = try engine.probe(path: fixtures.video)
        #expect(probe.kind == .video)
        #expect(probe.streams.map(\.codec) == ["h264", "aac"])
        #expect(probe.width == 320 && probe.height == 180)
        #expect(probe.hasAudio)
        #expect(abs((probe.durationSeconds ?? 0) - 2) < 0.1)
        #expect(probe.frameRate == 30)
        #expect((probe.bitRate ?? 0) > 0)
        #expect(probe.captureDate == CaptureDateParser.parse("2021-06-01T10:20:30Z"))
    }

    @Test func rotatedVideoReportsPortraitLikeFfprobeAfterRotation() throws {
        let probe = try engine.probe(path: fixtures.rotatedVideo)
        #expect(probe.orientation == .rotate90)
        #expect(probe.width == 180 && probe.height == 320)
        let stored = try MediaFixtures.rgbPixels(of: fixtures.rotatedVideo)
        #expect(stored.width == 320 && stored.height == 180)  // ffprobe reports the stored size
    }
}

@Suite("Thumbnails and previews")
struct ThumbnailTests {
    let fixtures: Fixtures
    let engine = MediaEngine()
    init() throws { fixtures = try Fixtures.shared() }

    @Test func exifOrientationSixGivesAPortraitThumbnailRedOnTop() throws {
        let path = fixtures.out("exif6-thumb." + MediaEngine.thumbnailFormat.fileExtension)
        let result = try engine.renderThumbnail(source: fixtures.exifJPEG, kind: .photo, to: path)
        #expect(result.width == 240 && result.height == 320)  // small source: never enlarged
        let image = try MediaFixtures.rgbPixels(of: path)
        #expect(image.width == 240 && image.height == 320)
        #expect(isRed(pixel(image, 120, 20)))
        #expect(isBlue(pixel(image, 120, 300)))
    }

    @Test func rotatedPhoneVideoGivesAPosterTheRightWayUp() throws {
        let path = fixtures.out("phone-thumb." + MediaEngine.thumbnailFormat.fileExtension)
        let result = try engine.renderThumbnail(source: fixtures.rotatedVideo, kind: .video, to: path)
        #expect(result.width == 180 && result.height == 320)
        let image = try MediaFixtures.rgbPixels(of: path)
        #expect(isRed(pixel(image, 90, 20)))
        #expect(isBlue(pixel(image, 90, 300)))
    }

    /// Issue 11: an AVCHD clip whose stream starts after 1 s and has one keyframe gets a poster (the seek lands
    /// past the keyframe; the decode starts over), of one field, at the full picture's shape.
    @Test func interlacedCameraClipWithALateStartGetsAOneFieldPoster() throws {
        let clip = try MediaFixtures.interlacedCameraClip(at: fixtures.out("interlaced-cam.mts"))
        let path = fixtures.out("interlaced-cam-thumb." + MediaEngine.thumbnailFormat.fileExtension)
        let result = try engine.renderThumbnail(source: clip, kind: .video, to: path)
        #expect(result.width == 320 && result.height == 240)
        let image = try MediaFixtures.rgbPixels(of: path)
        // Red everywhere: the top field alone, not red and blue lines blended to purple.
        #expect(isRed(pixel(image, 160, 60)) && isRed(pixel(image, 160, 180)))
    }

    /// Camera and phone containers beyond MP4: each gets a poster of its real size.
    @Test(arguments: [
        ("clip.3gp", ["-c:v", "mpeg4", "-s", "176x144"], 176, 144),
        ("clip.m4v", ["-c:v", "libx264", "-preset", "ultrafast"], 320, 240),
        ("clip.dv", ["-c:v", "dvvideo", "-s", "720x576", "-pix_fmt", "yuv420p", "-r", "25"], 720, 576),
        ("clip.avi", ["-c:v", "mjpeg", "-q:v", "3"], 320, 240),
    ])
    func cameraContainersGetAPoster(name: String, codec: [String], width: Int, height: Int) throws {
        let path = fixtures.out(name)
        try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25", "-t", "1"] + codec + ["-an", path])
        let probe = try engine.probe(path: path)
        #expect(probe.kind == .video)
        let stored = probe.orientation.displayed(width: probe.width ?? 0, height: probe.height ?? 0)
        #expect(stored.width == width && stored.height == height)
        let result = try engine.renderThumbnail(source: path, kind: .video, to: fixtures.out(name + ".webp"))
        #expect(result.width > 0 && result.height > 0)
    }

    /// A 10-bit BT.2020 video is converted with its own matrix (BT.601's would shift every colour).
    @Test func bt2020VideoKeepsItsColours() throws {
        let clip = try MediaFixtures.bt2020Clip(at: fixtures.out("bt2020.mp4"), rgb: "20C040")
        let path = fixtures.out("hlg-thumb." + MediaEngine.thumbnailFormat.fileExtension)
        _ = try engine.renderThumbnail(source: clip, kind: .video, to: path)
        let image = try MediaFixtures.rgbPixels(of: path)
        let centre = pixel(image, image.width / 2, image.height / 2)
        let expected = [0x20, 0xC0, 0x40]
        for (channel, value) in zip(centre, expected) { #expect(abs(Int(channel) - value) <= 8, "\(Array(centre))") }
    }

    /// HDR video is tone-mapped: PQ reference white (203 cd/m²) is bright, not the washed-out grey of its
    /// signal value, and a 1000 cd/m² highlight is brighter still without wrapping.
    @Test func hdrPosterIsToneMappedNotWashedOut() throws {
        func centre(_ rgb: String, _ transfer: String) throws -> Int {
            let clip = try MediaFixtures.bt2020Clip(at: fixtures.out("pq-\(rgb).mp4"), rgb: rgb, transfer: transfer)
            let path = fixtures.out("pq-\(rgb)-thumb." + MediaEngine.thumbnailFormat.fileExtension)
            _ = try engine.renderThumbnail(source: clip, kind: .video, to: path)
            let image = try MediaFixtures.rgbPixels(of: path)
            return Int(pixel(image, image.width / 2, image.height / 2).first!)
        }
        let referenceWhite = try centre("949494", "smpte2084")  // signal 0.58: 148 if shown as is
        let highlight = try centre("C0C0C0", "smpte2084")       // signal 0.75: about 1000 cd/m²
        #expect(referenceWhite >= 200, "\(referenceWhite)")
        #expect(highlight > referenceWhite)
    }

    @Test func oneDecodeWritesThumbnailPreviewAndClip() throws {
        let result = try engine.renderDerivatives(
            source: fixtures.camera, kind: .photo, thumbnail: fixtures.out("cam-thumb.webp"),
            preview: fixtures.out("cam-preview.jpg"),
            clip: ClipTarget(path: fixtures.out("cam-clip.mp4"), options: ClipOptions(seconds: 1)))
        #expect(result.thumbnail.width == 333 && result.thumbnail.height == 250)
        #expect(result.thumbnail.format == MediaEngine.thumbnailFormat)
        #expect(result.preview?.width == 1920 && result.preview?.height == 1440)
        #expect(result.preview.map { $0.byteCount > 10_000 } == true)
        let clip = try #require(result.clip)
        #expect(clip.width == 1440 && clip.height == 1080)
        #expect(abs(clip.durationSeconds - 1) <= 1.0 / 30 + 1e-6)
        let preview = try MediaFixtures.rgbPixels(of: fixtures.out("cam-preview.jpg"))
        #expect(preview.width == 1920 && preview.height == 1440)
    }

    @Test func concurrentCallsOnDifferentFilesAllSucceed() throws {
        let sources = [fixtures.camera, fixtures.exifJPEG, fixtures.video, fixtures.alphaPNG, fixtures.deepPNG, fixtures.rotatedVideo]
        let kinds: [MediaKind] = [.photo, .photo, .video, .photo, .photo, .video]
        let results = ConcurrentResults(count: sources.count * 2)
        let folder = fixtures.folder
        let engine = self.engine
        DispatchQueue.concurrentPerform(iterations: sources.count * 2) { index in
            let source = index % sources.count
            let outcome = Result {
                try engine.renderDerivatives(source: sources[source], kind: kinds[source],
                                             thumbnail: folder.subpath("concurrent-\(index).webp"),
                                             preview: folder.subpath("concurrent-\(index).jpg"))
            }
            results.set(index, (try? outcome.get())?.thumbnail.width ?? 0)
        }
        #expect(results.values.allSatisfy { $0 > 0 })
        #expect(results.values[0] == results.values[sources.count])
    }

    @Test func alphaIsFlattenedOntoWhite() throws {
        let path = fixtures.out("alpha-thumb.jpg")
        var configuration = MediaConfiguration()
        configuration.thumbnailShortSide = 100
        _ = try MediaEngine(configuration: configuration).renderThumbnail(source: fixtures.alphaPNG, kind: .photo, to: path)
        let image = try MediaFixtures.rgbPixels(of: path)
        #expect(image.width == 150 && image.height == 100)
        let p = pixel(image, 75, 50)
        // Half-transparent red over white is (255, 128, 128), give or take YUV rounding.
        #expect(p[p.startIndex] > 235 && (100...160).contains(p[p.startIndex + 1]) && (100...160).contains(p[p.startIndex + 2]))
    }

    @Test func tenBitHEVCVideoGivesAPoster() throws {
        let video = try MediaFixtures.tenBitVideo(at: fixtures.out("ten.mp4"))
        let probe = try engine.probe(path: video)
        #expect(probe.streams.first?.codec == "hevc")
        let path = fixtures.out("ten-thumb." + engine.thumbnailFormat.fileExtension)
        let result = try engine.renderDerivatives(source: video, kind: .video, thumbnail: path, preview: nil)
        #expect(result.thumbnail.width == 320 && result.thumbnail.height == 180)
        let image = try MediaFixtures.rgbPixels(of: path)
        #expect(image.rgb.count == 320 * 180 * 3)
    }

    @Test func sixteenBitPNGDecodes() throws {
        let path = fixtures.out("deep-thumb.webp")
        let result = try engine.renderThumbnail(source: fixtures.deepPNG, kind: .photo, to: path)
        #expect(result.width == 333 && result.height == 250)
        #expect(result.byteCount > 100)
    }

    /// libwebp's effort and segments reach the encoder: the fastest and the most thorough effort write different
    /// files, as do one segment and four; the defaults write a thumbnail that decodes at its size.
    @Test func webpEffortAndSegmentsReachLibwebp() throws {
        func thumbnail(method: Int = MediaConfiguration().webpMethod,
                       segments: Int = MediaConfiguration().webpSegments) throws -> (path: String, bytes: Data) {
            var configuration = MediaConfiguration()
            configuration.webpMethod = method
            configuration.webpSegments = segments
            let path = fixtures.out("effort-\(method)-segments-\(segments).webp")
            _ = try MediaEngine(configuration: configuration).renderThumbnail(source: fixtures.camera, kind: .photo, to: path)
            return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(try thumbnail(method: 0).bytes != thumbnail(method: 6).bytes)
        #expect(try thumbnail(segments: 1).bytes != thumbnail(segments: 4).bytes)
        let image = try MediaFixtures.rgbPixels(of: try thumbnail().path)
        #expect(image.width == 333 && image.height == 250)
    }

    /// A setting libwebp refuses is an engine failure that names the file, not a crash or an empty file.
    @Test func aSettingLibwebpRefusesFailsNamingTheFile() throws {
        var configuration = MediaConfiguration()
        configuration.webpSegments = 9
        let path = fixtures.out("refused.webp")
        #expect {
            _ = try MediaEngine(configuration: configuration).renderThumbnail(source: fixtures.camera, kind: .photo, to: path)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.category == .engine && "\(error)".contains(fixtures.camera) && "\(error)".contains("9 segments")
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

@Suite("Synthesis")
struct SynthesisTests {
    let fixtures: Fixtures
    init() throws { fixtures = try Fixtures.shared() }

    @Test func stillBecomesAThreeSecondClipThatProbesBack() throws {
        let path = fixtures.out("exif6.mp4")
        let clip = try MediaEngine().synthesizeClip(source: fixtures.exifJPEG, to: path)
        #expect(clip.codec == MediaEngine.clipCodec)
        #expect(clip.width == 240 && clip.height == 320)
        #expect(clip.frameCount == 90)
        let probe = try MediaEngine().probe(path: path)
        #expect(abs((probe.durationSeconds ?? 0) - 3) <= 1.0 / 30 + 1e-6)
        #expect(probe.frameRate == 30)
        let first = try MediaFixtures.rgbPixels(of: path)
        #expect(isRed(pixel(first, 120, 20)))
    }

    @Test func kenBurnsZoomsWithinTheSameGeometry() throws {
        let path = fixtures.out("kb.mp4")
        let clip = try MediaEngine().synthesizeClip(
            source: fixtures.camera, to: path, options: ClipOptions(seconds: 1, kenBurns: true))
        #expect(clip.width == 1440 && clip.height == 1080)
        #expect(clip.frameCount == 30)
    }
}

@Suite("Hostile input")
struct HostileInputTests {
    let folder: TemporaryDirectory
    init() throws { folder = try TemporaryDirectory(prefix: "cairn-hostile") }

    /// The MediaError `body` throws, nil when it succeeds; any other error fails the test.
    private func failure(_ body: () throws -> Void) -> MediaError? {
        do { try body(); return nil } catch let error as MediaError { return error } catch {
            Issue.record("not a MediaError: \(error)")
            return nil
        }
    }

    @Test func zeroByteFileHasAReason() throws {
        let path = try MediaFixtures.zeroBytes(at: folder.subpath("empty.jpg"))
        let error = failure { _ = try MediaEngine().probe(path: path) }
        #expect(error?.category == .corrupt)
        #expect(error?.description == "\(path): probe: empty file (0 bytes)")
    }

    @Test func garbageWithAMediaExtensionHasAReason() throws {
        for name in ["noise.jpg", "noise.mp4", "noise.png"] {
            let path = try MediaFixtures.garbage(at: folder.subpath(name))
            let probe = failure { _ = try MediaEngine().probe(path: path) }
            let thumb = failure { _ = try MediaEngine().renderThumbnail(source: path, kind: .photo, to: path + ".webp") }
            #expect(probe != nil && probe?.isRetryable == false)
            #expect(thumb != nil && thumb?.isRetryable == false)
        }
    }

    /// A JPEG claiming 65535x65535 (4 G pixels in a few KB), and a PNG header whose pixel count overflows 64 bits.
    @Test(arguments: ["huge.jpg", "overflow.png"])
    func absurdDimensionsFailFastAsTooLarge(name: String) throws {
        let path = folder.subpath(name)
        let claim: String
        if name.hasSuffix(".jpg") {
            try MediaFixtures.absurdDimensionsJPEG(at: path)
            claim = "65535x65535"
        } else {
            try MediaFixtures.overflowingDimensionsPNG(at: path)
            claim = "4294967295x4294967295"
        }
        let probe = failure { _ = try MediaEngine().probe(path: path) }
        #expect(probe?.category == .tooLarge)
        #expect(probe?.reason.contains(claim) == true)
        let thumb = failure { _ = try MediaEngine().renderThumbnail(source: path, kind: .photo, to: path + ".webp") }
        #expect(thumb?.category == .tooLarge)
    }

    /// libheif reads HEIC now; a HEIC stub with no image in it is damaged, with libheif's reason.
    @Test func heicWithNoImageIsCorruptWithLibheifsReason() throws {
        let path = try MediaFixtures.heicLike(at: folder.subpath("IMG_0001.HEIC"))
        let error = failure { _ = try MediaEngine().probe(path: path) }
        #expect(error?.category == .corrupt)
        #expect(error?.operation.hasPrefix("heif_") == true)
        #expect(error?.isRetryable == false)
    }

    @Test func truncatedFilesEndWithAResultOrAReason() throws {
        let jpeg = try MediaFixtures.truncatedJPEG(at: folder.subpath("half.jpg"))
        let video = try MediaFixtures.truncatedVideo(at: folder.subpath("third.mp4"))
        // A half JPEG may still decode (grey bottom); either way nothing crashes or hangs.
        let thumb = failure { _ = try MediaEngine().renderThumbnail(source: jpeg, kind: .photo, to: jpeg + ".webp") }
        #expect(thumb == nil || thumb?.isRetryable == false)
        let probe = failure { _ = try MediaEngine().probe(path: video) }
        #expect(probe?.isRetryable == false)
        #expect(probe?.file == video)
    }

    @Test func missingFileIsUnreadable() {
        let error = failure { _ = try MediaEngine().probe(path: folder.subpath("nope.jpg")) }
        #expect(error?.category == .unreadable)
        #expect(error?.reason == "No such file or directory")
    }
}
