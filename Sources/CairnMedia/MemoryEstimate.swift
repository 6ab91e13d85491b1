import CairnCore

/// The memory table: what a file's thumbnail phase (one decode, the thumbnail and the preview) and a still's clip
/// (a decode at the clip's size and x264) hold at their peak, from what its probe knows. The scheduler admits those
/// phases against the run's `MemoryBudget` by these figures, so they are meant to sit a little above the measured
/// peak, never far below it.
///
/// Calibrated on 2 cores by the resident peak of `cairn thumbnail --preview` and `cairn synthesize` on one file each,
/// less that of the same command on a 64x48 file of its format; `MemoryLimitTests` measures the large fixtures again,
/// each in a process of its own, and holds every peak within 0.67 to 1.1 of its estimate.
enum MemoryEstimate {
    /// x264 (`preset veryfast`, `tune stillimage`, lookahead 3 in the encoding thread) holds about this many bytes
    /// a pixel of the clip, and `encoderBytesPerPixelPerThread` more for each of its frame threads (fitted to
    /// `/usr/bin/time` peaks of one 1620x1080 clip with 1 to 6 threads, less a tiny clip's).
    static let encoderBytesPerPixel = 40.0
    static let encoderBytesPerPixelPerThread = 12.0
    /// Of the decode for a clip, what is still held when the encoder peaks (the decoded picture is freed once the
    /// clip's master frame is made; what glibc keeps of it is not).
    static let decodeHeldAtEncoderPeak = 0.7
    /// A HEIF's largest embedded thumbnail decoded (a phone's is 1–4 MP), when the picture is too large to decode whole.
    static let embeddedThumbnailDecode = 4_000_000 * 5.5
    /// libjxl and libhwy are loaded on the first JPEG XL (`CLibraryLoader`): the pages of their code and tables a
    /// large picture's decode touches (a 64x48 one touches a fifth of them).
    static let jxlLibraryBytes = Double(8 << 20)

    static func footprint(of probe: MediaProbe, header: StillHeader, fileBytes: Int, configuration: MediaConfiguration,
                          clip: ClipOptions = ClipOptions(), cores: Int = System.coreCount) -> MemoryFootprint {
        let stored = probe.streams.first { $0.type == "video" }
        let width = stored?.width ?? probe.width ?? 0, height = stored?.height ?? probe.height ?? 0
        let thumbnail = decode(probe, header: header, width: width, height: height, fileBytes: fileBytes,
                               targetShortSide: configuration.previewShortSide, configuration: configuration)
        guard probe.kind == .photo else { return MemoryFootprint(thumbnail: thumbnail, clip: 0) }
        let size = SizePlanning.clipSize(width: max(1, probe.width ?? width), height: max(1, probe.height ?? height),
                                         maxLongSide: clip.maxLongSide, maxShortSide: clip.maxShortSide)
        let threads = configuration.clipEncoderThreads > 0 ? configuration.clipEncoderThreads : max(1, cores * 3 / 2)
        let encoder = Double(size.width * size.height)
            * (encoderBytesPerPixel + encoderBytesPerPixelPerThread * Double(threads))
        let forClip = decode(probe, header: header, width: width, height: height, fileBytes: fileBytes,
                             targetShortSide: min(size.width, size.height), configuration: configuration)
        // The peak is the decode's or the encoder's, whichever is higher.
        let clipPeak = max(Double(forClip), encoder + decodeHeldAtEncoderPeak * Double(forClip))
        return MemoryFootprint(thumbnail: thumbnail, clip: Int64(clipPeak))
    }

    /// One decode's peak: the file where the decoder reads it whole (or maps it), and the pixels it decodes at the
    /// bytes a pixel its decoder holds (its planes, and the copies it converts through).
    static func decode(_ probe: MediaProbe, header: StillHeader, width: Int, height: Int, fileBytes: Int,
                       targetShortSide: Int, configuration: MediaConfiguration) -> Int64 {
        let pixels = Double(width) * Double(height)
        let deep = (probe.bitDepth ?? 8) > 8
        let file = Double(fileBytes)
        let bytes: Double
        switch probe.container {
        case "jpeg" where header.container == .jpeg:
            // libjpeg-turbo decodes planes straight at the DCT scale the preview allows; a progressive JPEG holds
            // every coefficient of the whole picture as well.
            let level = configuration.shrinkOnLoad
                ? SizePlanning.lowresLevel(width: width, height: height, targetShortSide: targetShortSide, maxLevel: 3,
                                           margin: configuration.shrinkOnLoadMargin) : 0
            let perPixel = header.jpegBytesPerPixel ?? 3
            var held = file + pixels / Double(1 << (2 * level)) * perPixel
            if header.isProgressiveJPEG { held += pixels * perPixel * 2 }
            bytes = held
        // libheif's planes and its conversion. At 10 and 12 bits the decoder's own 16-bit frame, libheif's copy and
        // its conversion to the 4:2:0 planes asked for: 13 bytes a pixel from 4:2:0, 17.5 from a camera's 4:2:2.
        case "heif", "avif":
            // Too large to decode whole (`maxDecodeBytes`): rendered from an embedded thumbnail, or refused.
            let whole = pixels * HEIFDecoder.wholeDecodeBytesPerPixel(deep: deep) > Double(configuration.maxDecodeBytes)
            bytes = file + (whole ? embeddedThumbnailDecode : pixels * (deep ? 17.5 : 5.5))
        // libtiff maps the file; the picture is converted to 8-bit RGBA.
        case "tiff": bytes = file + pixels * 4
        case "jxl": bytes = jxlLibraryBytes + file + pixels * (deep ? 6.6 : 3.3)
        // LibRaw's 16-bit raw and processed images.
        case "raw": bytes = file + pixels * 8
        default:
            if probe.kind == .video {
                // The decoder's reference frames and the frame scaled from.
                bytes = pixels * 1.5 * (deep ? 2 : 1) * 4.3
            } else {
                // FFmpeg's decoders: the picture in RGBA (16 bits a sample when deep), and a planar copy.
                bytes = file + pixels * (deep ? 9.5 : 5.5)
            }
        }
        return Int64(bytes.rounded(.up))
    }
}
