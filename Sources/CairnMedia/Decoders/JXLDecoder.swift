import CFFmpeg
import CJXL

// libjxl calls live here and nowhere else. FFmpeg's libjxl wrapper decodes a whole frame at its own bit depth
// (hundreds of MB for a 16-bit 12 MP file); here rows stream out as they are rendered and are shrunk on arrival.

/// A libjxl decoder (`JxlDecoder *`), destroyed in deinit.
final class JXLHandle {
    let pointer: OpaquePointer

    init(call: FFmpegCall) throws(MediaError) {
        guard let decoder = JxlDecoderCreate(nil) else {
            throw call.failure("JxlDecoderCreate", "cannot create a JPEG XL decoder", .io)
        }
        pointer = decoder
    }

    deinit { JxlDecoderDestroy(pointer) }

    /// Runs the decoder to its next event; an error or input that ends early is the file's fault.
    func next(call: FFmpegCall) throws(MediaError) -> JxlDecoderStatus {
        let status = JxlDecoderProcessInput(pointer)
        switch status {
        case JXL_DEC_ERROR: throw call.failure("JxlDecoderProcessInput", "JPEG XL data does not decode", .corrupt)
        case JXL_DEC_NEED_MORE_INPUT: throw call.failure("JxlDecoderProcessInput", "truncated JPEG XL file", .corrupt)
        default: return status
        }
    }

    func check(_ status: JxlDecoderStatus, _ operation: String, call: FFmpegCall) throws(MediaError) {
        guard status == JXL_DEC_SUCCESS else { throw call.failure(operation, "libjxl refused the request", .corrupt) }
    }
}

/// The box-averaging accumulator the callback writes into, and its sums, freed together.
final class JXLAccumulator {
    /// At a fixed address: libjxl keeps the pointer for its callbacks.
    let state: UnsafeMutablePointer<CJXL_Accumulator>
    let buffer: PixelBuffer

    init(width: Int, height: Int, shift: Int, inChannels: Int, outChannels: Int, call: FFmpegCall) throws(MediaError) {
        let outWidth = (width + (1 << shift) - 1) >> shift
        let outHeight = (height + (1 << shift) - 1) >> shift
        let count = outWidth * outHeight * outChannels
        buffer = try PixelBuffer(byteCount: count * MemoryLayout<UInt16>.size, call: call)
        buffer.bytes.initialize(repeating: 0, count: count * MemoryLayout<UInt16>.size)
        state = .allocate(capacity: 1)
        state.initialize(to: CJXL_Accumulator(
            width: width, height: height, out_width: outWidth, out_height: outHeight, shift: UInt32(shift),
            in_channels: UInt32(inChannels), out_channels: UInt32(outChannels),
            sums: UnsafeMutableRawPointer(buffer.bytes).assumingMemoryBound(to: UInt16.self)))
    }

    deinit { state.deallocate() }

    var outWidth: Int { state.pointee.out_width }
    var outHeight: Int { state.pointee.out_height }
}

struct JXLDecoder {
    let configuration: MediaConfiguration

    /// libjxl's own state for a frame: about 3 bytes a pixel for a lossy (VarDCT) frame, 4 a sample for a
    /// modular (lossless) one, which keeps every channel whole as 32-bit integers.
    static func decodeBytes(width: Int, height: Int, channels: Int, lossless: Bool) -> Int {
        width * height * (lossless ? 4 * channels : 3)
    }

    func probe(_ bytes: UnsafePointer<UInt8>, count: Int, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let decoder = try JXLHandle(call: call)
        try decoder.check(JxlDecoderSubscribeEvents(decoder.pointer, Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_BOX.rawValue)),
                          "JxlDecoderSubscribeEvents", call: call)
        try decoder.check(JxlDecoderSetDecompressBoxes(decoder.pointer, JXL_TRUE), "JxlDecoderSetDecompressBoxes", call: call)
        // Stored size and the real orientation (by default libjxl reports both as already turned).
        try decoder.check(JxlDecoderSetKeepOrientation(decoder.pointer, JXL_TRUE), "JxlDecoderSetKeepOrientation", call: call)
        try decoder.check(JxlDecoderSetInput(decoder.pointer, bytes, count), "JxlDecoderSetInput", call: call)
        JxlDecoderCloseInput(decoder.pointer)
        var info = JxlBasicInfo()
        var haveInfo = false
        var exif: [UInt8] = []
        var exifFilled = 0
        var readingExif = false
        func endExif() {
            guard readingExif else { return }
            exifFilled = exif.count - JxlDecoderReleaseBoxBuffer(decoder.pointer)
            readingExif = false
        }
        loop: while true {
            let status: JxlDecoderStatus
            do { status = try decoder.next(call: call) } catch {
                // Metadata boxes after the codestream are optional: a file cut there still has its size.
                if haveInfo { break loop }
                throw error
            }
            switch status {
            case JXL_DEC_BASIC_INFO:
                try decoder.check(JxlDecoderGetBasicInfo(decoder.pointer, &info), "JxlDecoderGetBasicInfo", call: call)
                haveInfo = true
            case JXL_DEC_BOX:
                endExif()
                var type = [CChar](repeating: 0, count: 4)
                guard JxlDecoderGetBoxType(decoder.pointer, &type, JXL_TRUE) == JXL_DEC_SUCCESS else { continue }
                let name = String(decoding: type.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                guard name == "Exif", exif.isEmpty else { continue }
                exif = [UInt8](repeating: 0, count: 64 << 10)
                readingExif = true
                exif.withUnsafeMutableBufferPointer { _ = JxlDecoderSetBoxBuffer(decoder.pointer, $0.baseAddress, $0.count) }
            case JXL_DEC_BOX_NEED_MORE_OUTPUT:
                // Grow the box buffer (EXIF is rarely over 64 KB) and let libjxl go on writing after what it wrote.
                let written = exif.count - JxlDecoderReleaseBoxBuffer(decoder.pointer)
                guard exif.count < 4 << 20 else { readingExif = false; exif = []; continue }
                exif += [UInt8](repeating: 0, count: exif.count)
                exif.withUnsafeMutableBufferPointer {
                    _ = JxlDecoderSetBoxBuffer(decoder.pointer, $0.baseAddress! + written, $0.count - written)
                }
            case JXL_DEC_SUCCESS:
                endExif()
                break loop
            default:
                continue
            }
        }
        guard haveInfo else { throw call.failure("JxlDecoderGetBasicInfo", "JPEG XL without a size", .corrupt) }
        let width = Int(info.xsize), height = Int(info.ysize)
        try call.checkPixels(width, height, cap: configuration.maxPixels, operation: "probe")
        // The codestream's orientation is the picture's (an Exif one is ignored); decoding applies it.
        let orientation = Orientation(exifValue: Int(info.orientation.rawValue)) ?? .identity
        let displayed = orientation.displayed(width: width, height: height)
        // The Exif box: a 4-byte offset to the TIFF header, then the TIFF structure.
        let summary: ExifSummary? = {
            guard exifFilled > 4 else { return nil }
            let offset = Int(exif[0]) << 24 | Int(exif[1]) << 16 | Int(exif[2]) << 8 | Int(exif[3])
            guard offset >= 0, 4 + offset < exifFilled else { return nil }
            return ExifReader(tiff: Array(exif[(4 + offset)..<exifFilled]))?.summary()
        }()
        return MediaProbe(
            container: "jxl", kind: .photo,
            streams: [.init(index: 0, type: "video", codec: "jpegxl", width: width, height: height)],
            width: displayed.width, height: displayed.height, orientation: orientation,
            captureDate: summary?.captureTime?.sortDate, captureTime: summary?.captureTime,
            cameraMake: summary?.make, cameraModel: summary?.model, gps: summary?.gps,
            animated: info.have_animation != 0 ? true : nil)
    }

    /// The first frame, upright, box-shrunk on arrival by the largest power of two that keeps its short side
    /// at least `targetShortSide`; colours in sRGB (libjxl renders lossy files to it) or with their profile.
    func decode(_ bytes: UnsafePointer<UInt8>, count: Int, targetShortSide: Int, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let decoder = try JXLHandle(call: call)
        let events = JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FULL_IMAGE.rawValue
        try decoder.check(JxlDecoderSubscribeEvents(decoder.pointer, Int32(events)), "JxlDecoderSubscribeEvents", call: call)
        try decoder.check(JxlDecoderSetInput(decoder.pointer, bytes, count), "JxlDecoderSetInput", call: call)
        JxlDecoderCloseInput(decoder.pointer)
        var info = JxlBasicInfo()
        var accumulator: JXLAccumulator?
        var profile: ColourProfile?
        var upright = (width: 0, height: 0)
        var inChannels = 3, outChannels = 3
        while true {
            switch try decoder.next(call: call) {
            case JXL_DEC_BASIC_INFO:
                try decoder.check(JxlDecoderGetBasicInfo(decoder.pointer, &info), "JxlDecoderGetBasicInfo", call: call)
                let width = Int(info.xsize), height = Int(info.ysize)
                try call.checkPixels(width, height, cap: configuration.maxPixels, operation: "decode")
                let hasAlpha = info.alpha_bits > 0
                let colours = Int(info.num_color_channels)
                inChannels = colours == 1 ? (hasAlpha ? 2 : 1) : (hasAlpha ? 4 : 3)
                outChannels = hasAlpha ? 4 : 3
                let lossless = info.uses_original_profile != 0
                let needed = Self.decodeBytes(width: width, height: height, channels: inChannels, lossless: lossless)
                guard needed <= configuration.maxDecodeBytes else {
                    throw call.failure("decode", "JPEG XL of \(width)x\(height)\(lossless ? " (lossless)" : "") needs about "
                                       + "\(needed >> 20) MB to decode, above the budget of \(configuration.maxDecodeBytes >> 20) MB",
                                       .unsupported)
                }
                // libjxl turns the pixels itself and then reports the turned size.
                upright = (width, height)
            case JXL_DEC_COLOR_ENCODING:
                if info.uses_original_profile == 0 {
                    _ = CJXL_prefer_srgb(decoder.pointer, info.num_color_channels == 1 ? 1 : 0)
                }
                if CJXL_data_is_srgb(decoder.pointer) == 0, info.num_color_channels == 3 {
                    var size = 0
                    if JxlDecoderGetICCProfileSize(decoder.pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
                       size > 0, size < 4 << 20 {
                        var icc = [UInt8](repeating: 0, count: size)
                        if JxlDecoderGetColorAsICCProfile(decoder.pointer, nil, JXL_COLOR_PROFILE_TARGET_DATA, &icc, size)
                            == JXL_DEC_SUCCESS {
                            profile = ColourProfile(bytes: icc).flatMap { $0.isRGB && !$0.isSRGB ? $0 : nil }
                        }
                    }
                }
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                let shift = SizePlanning.lowresLevel(width: upright.width, height: upright.height,
                                                     targetShortSide: targetShortSide, maxLevel: 4, margin: 1)
                let made = try JXLAccumulator(width: upright.width, height: upright.height, shift: shift,
                                              inChannels: inChannels, outChannels: outChannels, call: call)
                accumulator = made
                try decoder.check(CJXL_set_accumulating_output(decoder.pointer, made.state),
                                  "JxlDecoderSetImageOutCallback", call: call)
            case JXL_DEC_FULL_IMAGE:
                // The first frame (an animation's first, composed) is the picture.
                guard let accumulator else {
                    throw call.failure("JxlDecoderProcessInput", "JPEG XL frame without pixels", .corrupt)
                }
                CJXL_accumulator_finish(accumulator.state)
                let frame = try Frame(call: call)
                frame.pointer.pointee.width = Int32(accumulator.outWidth)
                frame.pointer.pointee.height = Int32(accumulator.outHeight)
                frame.pointer.pointee.format = (outChannels == 4 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24).rawValue
                CFFmpeg_frame_borrow_plane(frame.pointer, 0, accumulator.buffer.bytes, Int32(accumulator.outWidth * outChannels))
                return DecodedPicture(frame: frame, orientation: .identity, file: call.file, profile: profile, owner: accumulator)
            case JXL_DEC_SUCCESS:
                throw call.failure("JxlDecoderProcessInput", "JPEG XL file without a frame", .corrupt)
            default:
                continue
            }
        }
    }
}
