/// Sizes, qualities and caps for the media engine. The defaults suit a photo library.
public struct MediaConfiguration: Sendable, Equatable {
    /// The small thumbnail's short side, in pixels.
    public var thumbnailShortSide = 250
    /// The preview's short side, in pixels.
    public var previewShortSide = 1440
    /// The thumbnail's format: WebP unless set.
    public var thumbnailFormat: ImageFormat = .preferredThumbnailFormat
    /// libwebp quality (0...100) for WebP thumbnails.
    public var webpQuality = 75
    /// libwebp's effort (`method`, 0 fastest ... 6 smallest) for WebP thumbnails. On real photos' thumbnails 2
    /// encodes much faster than libwebp's default of 4, its files a little larger and a little less sharp
    /// (`Benchmarks/scripts/webp-effort`; figures in `Benchmarks/README.md`).
    public var webpMethod = 2
    /// libwebp's segments (1...4): parts of the picture that each get their own quantizer. For real photos'
    /// thumbnails one segment encodes faster than libwebp's default of 4 (more so for small pictures), with
    /// larger and sharper files: about the same bytes for the quality (`Benchmarks/scripts/webp-effort`; figures in
    /// `Benchmarks/README.md`).
    public var webpSegments = 1
    /// A plain JPEG no larger than a preview is its own preview only within this many bits a pixel (about what a
    /// quality-90 JPEG of a photo takes); a heavier file, 13 bits a pixel from a noisy sensor, gets a lighter preview.
    public var sourcePreviewMaxBitsPerPixel = 4.0
    /// mjpeg `qscale` (2 best ... 31 worst) for JPEG thumbnails and previews; 4 is about libjpeg q80.
    public var jpegQScale = 4
    /// Pictures with more pixels than this fail fast with ``MediaError/Category/tooLarge``.
    public var maxPixels = 150_000_000
    /// Memory one full-size decode may take (HEIF: about 4.5 bytes a pixel at 8 bits, 9 at 10/12 bits; a progressive
    /// JPEG's coefficients: 3 at 4:2:0; JPEG XL: 3 lossy, 4 a sample lossless). A HEIF above it is rendered from its
    /// largest embedded thumbnail instead (a 200 MP phone HEIC), never enlarged; the others are kept without preview.
    public var maxDecodeBytes = 256 << 20
    /// Still files larger than this are refused before reading them whole.
    public var maxStillBytes = 256 << 20
    /// Packets a decode may read before it gives up (hostile or broken streams).
    public var maxPacketsPerDecode = 600
    /// Bytes and microseconds FFmpeg may read to identify a container's streams.
    public var probeBytes = 5_000_000
    public var analyzeMicroseconds = 5_000_000
    /// Decode JPEGs at 1/2, 1/4 or 1/8 size when the largest derivative allows it.
    public var shrinkOnLoad = true
    /// Shrink-on-load stops while the decoded short side is at least this many times the largest
    /// derivative's, leaving the final filter pixels to average (libvips leaves 2 as well).
    public var shrinkOnLoadMargin = 2.0
    /// Which library decodes JPEGs: libjpeg-turbo (DCT scaling, the default), or FFmpeg's mjpeg decoder.
    public var jpegDecoder: JPEGDecoderChoice = .libjpegTurbo
    /// HEIF without alpha is decoded to YCbCr planes and converted by libswscale after scaling (faster, a third
    /// of the memory); off: libheif converts to RGB at full size.
    public var heifPlanarDecode = true
    /// Decoder threads per file; 1 suits a pipeline that runs one file per core.
    public var decoderThreads = 1
    /// x264's frame threads for a still's clip; 0 lets x264 choose (1.5 a core). Each thread holds more frames, so a
    /// run under a memory limit gives each clip one (`MediaConfiguration.within`): slower for a clip made alone, not
    /// for clips made beside other work.
    public var clipEncoderThreads = 0

    public init() {}
}

/// The JPEG decoder a ``MediaConfiguration`` uses; FFmpeg stays the fallback for what libjpeg-turbo refuses.
public enum JPEGDecoderChoice: String, Sendable, Equatable, CaseIterable {
    case libjpegTurbo = "libjpeg-turbo"
    case ffmpeg
}

/// Options for a still turned into a short video clip.
public struct ClipOptions: Sendable, Equatable, Codable {
    public var seconds: Double = 3
    public var framesPerSecond = 30
    /// A slow zoom in over the clip ("Ken Burns"), instead of a motionless picture.
    public var kenBurns = false
    /// The clip fits inside maxLongSide x maxShortSide, in either orientation.
    public var maxLongSide = 1920
    public var maxShortSide = 1080

    public init(seconds: Double = 3, framesPerSecond: Int = 30, kenBurns: Bool = false) {
        self.seconds = seconds
        self.framesPerSecond = framesPerSecond
        self.kenBurns = kenBurns
    }

    var frameCount: Int { max(1, Int((seconds * Double(framesPerSecond)).rounded())) }
}
