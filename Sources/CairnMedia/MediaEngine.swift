import CFFmpeg
import CairnCore

/// A still derivative written to disk.
public struct RenderedImage: Codable, Sendable, Equatable {
    public var path: String
    public var format: ImageFormat
    /// Displayed size.
    public var width: Int
    public var height: Int
    public var byteCount: Int
}

/// A synthesized clip, written and probed back.
public struct RenderedClip: Codable, Sendable, Equatable {
    public var path: String
    /// "h264" or "mpeg4", as probed back from the file.
    public var codec: String
    public var width: Int
    public var height: Int
    public var durationSeconds: Double
    public var frameCount: Int
}

/// Where to write a synthesized clip, and how to make it.
public struct ClipTarget: Sendable, Equatable {
    public var path: String
    public var options: ClipOptions
}

/// Everything made from one decode of a source.
public struct RenderedDerivatives: Codable, Sendable, Equatable {
    public var thumbnail: RenderedImage
    /// The preview: a file written at the preview path, or the source itself (`previewIsSource`).
    public var preview: RenderedImage?
    public var clip: RenderedClip?
    /// The source is its own preview (`RenderedImage.path` is the source's): an upright, 8-bit, sRGB or untagged
    /// YCbCr or grey JPEG no larger than a preview, in pixels and within `sourcePreviewMaxBitsPerPixel`. A copy
    /// would be the same size, re-encoded, so none is written.
    public var previewIsSource = false
}

/// The media engine: probing, thumbnails and still-to-video synthesis, in process through FFmpeg.
///
/// Stateless and `Sendable`: call it from any number of threads at once, on different files.
public struct MediaEngine: Sendable {
    public var configuration: MediaConfiguration

    public init(configuration: MediaConfiguration = MediaConfiguration()) {
        self.configuration = configuration
    }

    /// The default thumbnail format (and so file extension): WebP, encoded by libwebp.
    public static var thumbnailFormat: ImageFormat { .preferredThumbnailFormat }

    /// This engine's thumbnail format, known before rendering so the caller can name the file.
    public var thumbnailFormat: ImageFormat { configuration.thumbnailFormat }

    /// The codec clips are written with: "h264" (libx264) when present, else "mpeg4".
    public static var clipCodec: String { ClipWriter.preferredEncoder == "libx264" ? "h264" : "mpeg4" }

    /// Reads a file's container, streams and capture metadata.
    public func probe(path: String, interrupt: MediaInterrupt? = nil) throws(MediaError) -> MediaProbe {
        try MediaInterrupt.during(interrupt) { () throws(MediaError) in try Prober(configuration: configuration).probe(path: path) }
    }

    /// Reads a JPEG or PNG held whole in memory as `probe(path:)` reads its file; nil for anything else (it needs a
    /// file). `name` gives the extension and names it in errors.
    public func probeStill(bytes: [UInt8], name: String) throws(MediaError) -> MediaProbe? {
        try Prober(configuration: configuration).probeStill(bytes: bytes, name: name)
    }

    /// Decodes `source` once (a still, or a video's poster frame) and writes the thumbnail, the preview
    /// when `preview` is given, and the clip when `clip` is given and the source is a still.
    /// `sourceMayBePreview`: when the source already is what a preview would be (see
    /// ``RenderedDerivatives/previewIsSource``), nothing is written at `preview`. A library sets it; a caller that
    /// wants the file (`cairn thumbnail --preview`) does not.
    public func renderDerivatives(source: String, kind: MediaKind, thumbnail: String, preview: String?,
                                  clip: ClipTarget? = nil, sourceMayBePreview: Bool = false,
                                  interrupt: MediaInterrupt? = nil) throws(MediaError) -> RenderedDerivatives {
        try MediaInterrupt.during(interrupt) { () throws(MediaError) in
            try renderAll(source: source, kind: kind, thumbnail: thumbnail, preview: preview, clip: clip,
                          sourceMayBePreview: sourceMayBePreview)
        }
    }

    private func renderAll(source: String, kind: MediaKind, thumbnail: String, preview: String?,
                           clip: ClipTarget?, sourceMayBePreview: Bool) throws(MediaError) -> RenderedDerivatives {
        let makeClip = kind == .photo && clip != nil
        var largest = configuration.thumbnailShortSide
        if preview != nil { largest = max(largest, configuration.previewShortSide) }
        if makeClip, let clip { largest = max(largest, clip.options.maxShortSide) }
        let picture = try decode(source: source, kind: kind, targetShortSide: largest)
        var result = RenderedDerivatives(
            thumbnail: try writeImage(picture, shortSide: configuration.thumbnailShortSide,
                                      format: thumbnailFormat, to: thumbnail, sharpFilter: true))
        if preview != nil, sourceMayBePreview, picture.isPlainJPEG, Self.namesJPEG(source),
           min(picture.frame.width, picture.frame.height) <= configuration.previewShortSide,
           case let bytes = try FileIO.size(of: source, call: FFmpegCall(file: source)),
           Double(bytes * 8) <= Double(picture.frame.width * picture.frame.height) * configuration.sourcePreviewMaxBitsPerPixel {
            let size = picture.displayedSize
            result.preview = RenderedImage(path: source, format: .jpeg, width: size.width, height: size.height,
                                           byteCount: bytes)
            result.previewIsSource = true
        } else if let preview {
            result.preview = try writeImage(picture, shortSide: configuration.previewShortSide,
                                            format: .jpeg, to: preview, sharpFilter: false)
        }
        if makeClip, let clip {
            result.clip = try writeClip(picture, options: clip.options, to: clip.path)
        }
        return result
    }

    /// Writes only the small thumbnail.
    public func renderThumbnail(source: String, kind: MediaKind, to path: String) throws(MediaError) -> RenderedImage {
        let picture = try decode(source: source, kind: kind, targetShortSide: configuration.thumbnailShortSide)
        return try writeImage(picture, shortSide: configuration.thumbnailShortSide, format: thumbnailFormat,
                              to: path, sharpFilter: true)
    }

    /// Turns a still into an MP4 clip, probed back before it counts as done.
    public func synthesizeClip(source: String, to path: String, options: ClipOptions = ClipOptions(),
                               interrupt: MediaInterrupt? = nil) throws(MediaError) -> RenderedClip {
        try MediaInterrupt.during(interrupt) { () throws(MediaError) in try synthesize(source: source, to: path, options: options) }
    }

    private func synthesize(source: String, to path: String, options: ClipOptions) throws(MediaError) -> RenderedClip {
        let picture = try decode(source: source, kind: .photo, targetShortSide: options.maxShortSide)
        return try writeClip(picture, options: options, to: path)
    }

    // MARK: - Steps

    /// A name any viewer opens as a JPEG (what is inside was checked by the decode).
    static func namesJPEG(_ path: String) -> Bool {
        // Only the extension is lowercased, not the whole path.
        guard let dot = path.utf8.lastIndex(of: UInt8(ascii: ".")) else { return false }
        let fileExtension = path[path.utf8.index(after: dot)...]
        return fileExtension.utf8.count <= 4 && ["jpg", "jpeg", "jpe"].contains(fileExtension.lowercased())
    }

    private func decode(source: String, kind: MediaKind, targetShortSide: Int) throws(MediaError) -> DecodedPicture {
        let decoder = PictureDecoder(configuration: configuration)
        switch kind {
        case .video: return try decoder.decodePoster(path: source, targetShortSide: targetShortSide)
        case .photo: return try decoder.decodeStill(path: source, targetShortSide: targetShortSide)
        case .other: throw MediaError(operation: "decode", reason: "not a photo or video", file: source, category: .unsupported)
        }
    }

    private func writeImage(_ picture: DecodedPicture, shortSide: Int, format: ImageFormat, to path: String,
                            sharpFilter: Bool) throws(MediaError) -> RenderedImage {
        let renderer = PictureRenderer(picture)
        let size = renderer.storedSize(shortSide: shortSide)
        // Lanczos keeps small thumbnails crisp; SWS_ACCURATE_RND is left off: it disables swscale's SIMD paths.
        let flags = sharpFilter ? CFFmpeg_SWS_LANCZOS() : CFFmpeg_SWS_BICUBIC()
        let frame = try renderer.render(storedWidth: size.width, storedHeight: size.height,
                                        format: format.pixelFormat, flags: flags)
        let bytes = try ImageEncoder(configuration: configuration).write(frame, as: format, to: path, call: renderer.call)
        return RenderedImage(path: path, format: format, width: frame.width, height: frame.height, byteCount: bytes)
    }

    private func writeClip(_ picture: DecodedPicture, options: ClipOptions, to path: String) throws(MediaError) -> RenderedClip {
        let written = try ClipWriter(threads: configuration.clipEncoderThreads).write(picture, options: options, to: path)
        // The clip counts only once it probes back as what was written.
        let probe = try Prober(configuration: configuration).probe(path: path)
        let call = FFmpegCall(file: path)
        let codec = probe.streams.first { $0.type == "video" }?.codec ?? "none"
        let duration = probe.durationSeconds ?? 0
        let frame = 1 / Double(options.framesPerSecond)
        guard codec == written.codec, probe.width == written.width, probe.height == written.height else {
            throw call.failure("verify clip", "probed back as \(codec) \(probe.width ?? 0)x\(probe.height ?? 0), expected \(written.codec) \(written.width)x\(written.height)", .engine)
        }
        guard abs(duration - Double(options.frameCount) * frame) <= frame + 1e-6 else {
            throw call.failure("verify clip", "probed back as \(duration) s, expected \(options.seconds) s", .engine)
        }
        return RenderedClip(path: path, codec: codec, width: written.width, height: written.height,
                            durationSeconds: duration, frameCount: options.frameCount)
    }
}
