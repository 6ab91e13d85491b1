import CFFmpeg
import CTurboJPEG

// TurboJPEG calls live here and nowhere else.

/// A TurboJPEG decompressor, freed in deinit; one per decode (creating one costs a few microseconds).
final class TurboJPEGHandle {
    let pointer: tjhandle
    let call: FFmpegCall

    init(call: FFmpegCall) throws(MediaError) {
        self.call = call
        pointer = try call.require(tjInitDecompress(), "tjInitDecompress")
    }

    deinit { tjDestroy(pointer) }

    /// The one funnel for TurboJPEG return codes: fatal errors throw; a warning (a truncated file, a bad
    /// restart marker) is reported as such, and the caller lets FFmpeg judge the damaged file, as before.
    func check(_ rc: Int32, _ operation: String) throws(MediaError) -> Outcome {
        guard rc != 0 else { return .decoded }
        if tjGetErrorCode(pointer) == Int32(TJERR_WARNING.rawValue) { return .damaged }
        let reason = tjGetErrorStr2(pointer).map { String(cString: $0) } ?? "TurboJPEG error"
        throw call.failure(operation, reason, .corrupt)
    }

    enum Outcome { case decoded, damaged }
}

/// JPEG decoding with libjpeg-turbo: DCT-domain scaling (1/2, 1/4, 1/8) chosen from the target size,
/// YCbCr planes decoded straight into the frame libswscale reads; CMYK/YCCK converted to sRGB.
struct JPEGDecoder {
    let configuration: MediaConfiguration

    /// The decoded picture, or nil when libjpeg-turbo refuses the file (12-bit, lossless, no header) or finds
    /// it damaged (cut short): the caller then tries FFmpeg's decoder, which decides as it always has.
    func decode(_ bytes: UnsafePointer<UInt8>, count: Int, header: StillHeader, targetShortSide: Int,
                call: FFmpegCall) throws(MediaError) -> DecodedPicture? {
        let handle = try TurboJPEGHandle(call: call)
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        guard tjDecompressHeader3(handle.pointer, bytes, UInt(count), &width, &height, &subsampling, &colourspace) == 0
        else { return nil }
        try call.checkPixels(Int(width), Int(height), cap: configuration.maxPixels, operation: "decode")
        // A progressive JPEG is decoded from coefficients held for the whole picture, whatever the output
        // scale (libjpeg-turbo, vips and FFmpeg alike): 2 bytes a coefficient, 64 per block.
        if let marker = header.jpegFrameMarker, [0xC2, 0xC6, 0xCA, 0xCE].contains(marker) {
            let bytesPerPixel = [0: 6, 1: 4, 2: 3, 3: 2, 4: 4, 5: 3][Int(subsampling)] ?? 6
            let needed = Int(width) * Int(height) * bytesPerPixel
            guard needed <= configuration.maxDecodeBytes else {
                throw call.failure("decode", "progressive JPEG of \(width)x\(height) needs \(needed >> 20) MB of coefficients "
                                   + "to decode, above the budget of \(configuration.maxDecodeBytes >> 20) MB", .unsupported)
            }
        }
        var denominator: Int32 = 1
        if configuration.shrinkOnLoad {
            let level = SizePlanning.lowresLevel(width: Int(width), height: Int(height), targetShortSide: targetShortSide,
                                                 maxLevel: 3, margin: configuration.shrinkOnLoadMargin)
            denominator = 1 << level
        }
        let scaledWidth = Int(CTurboJPEG_scaled(width, 1, denominator))
        let scaledHeight = Int(CTurboJPEG_scaled(height, 1, denominator))
        let orientation = header.exif?.orientation ?? .identity
        let profile = header.iccProfile.flatMap { ColourProfile(bytes: $0) }

        if colourspace == Int32(TJCS_CMYK.rawValue) || colourspace == Int32(TJCS_YCCK.rawValue) {
            guard let frame = try decodeCMYK(handle, bytes, count, width: scaledWidth, height: scaledHeight,
                                             profile: profile?.isCMYK == true ? profile : nil,
                                             inverted: header.hasAdobeMarker, call: call) else { return nil }
            return DecodedPicture(frame: frame, orientation: orientation, file: call.file)
        }
        let rgbProfile = profile.flatMap { $0.isRGB && !$0.isSRGB ? $0 : nil }
        if let format = Self.planarFormat(subsampling: subsampling), colourspace != Int32(TJCS_RGB.rawValue) {
            let frame = try Frame(width: scaledWidth, height: scaledHeight, format: format, call: call)
            let planeCount = format == AV_PIX_FMT_GRAY8 ? 1 : 3
            var planes: [UnsafeMutablePointer<UInt8>?] = (0..<3).map { $0 < planeCount ? frame.plane($0) : nil }
            var strides: [Int32] = (0..<3).map { Int32(frame.linesize($0)) }
            let rc = planes.withUnsafeMutableBufferPointer { planePointers in
                tjDecompressToYUVPlanes(handle.pointer, bytes, UInt(count), planePointers.baseAddress,
                                        Int32(scaledWidth), &strides, Int32(scaledHeight), 0)
            }
            guard try handle.check(rc, "tjDecompressToYUVPlanes") == .decoded else { return nil }
            frame.pointer.pointee.color_range = AVCOL_RANGE_JPEG
            // Baseline, extended and progressive Huffman JPEGs; arithmetic coding, which browsers lack, is not plain.
            let huffman = header.jpegFrameMarker.map { [0xC0, 0xC1, 0xC2].contains($0) } ?? false
            let plain = huffman && denominator == 1 && rgbProfile == nil && orientation == .identity
            return DecodedPicture(frame: frame, orientation: orientation, file: call.file, profile: rgbProfile,
                                  isPlainJPEG: plain)
        }
        // RGB JPEGs and unusual subsampling: packed RGB.
        let frame = try Frame(width: scaledWidth, height: scaledHeight, format: AV_PIX_FMT_RGB24, call: call)
        guard try handle.check(tjDecompress2(handle.pointer, bytes, UInt(count), frame.plane(0), Int32(scaledWidth),
                                             Int32(frame.linesize(0)), Int32(scaledHeight), Int32(TJPF_RGB.rawValue), 0),
                               "tjDecompress2") == .decoded else { return nil }
        return DecodedPicture(frame: frame, orientation: orientation, file: call.file, profile: rgbProfile)
    }

    /// CMYK samples converted to sRGB: through the embedded profile when there is one, else by the
    /// plain formula (as Pillow does); Adobe files store the samples inverted.
    private func decodeCMYK(_ handle: TurboJPEGHandle, _ bytes: UnsafePointer<UInt8>, _ count: Int, width: Int,
                            height: Int, profile: ColourProfile?, inverted: Bool,
                            call: FFmpegCall) throws(MediaError) -> Frame? {
        let cmyk = try Frame(width: width, height: height, format: AV_PIX_FMT_RGBA, call: call)  // 4 bytes a pixel
        guard try handle.check(tjDecompress2(handle.pointer, bytes, UInt(count), cmyk.plane(0), Int32(width),
                                             Int32(cmyk.linesize(0)), Int32(height), Int32(TJPF_CMYK.rawValue), 0),
                               "tjDecompress2") == .decoded else { return nil }
        let rgb = try Frame(width: width, height: height, format: AV_PIX_FMT_RGB24, call: call)
        guard let source = cmyk.plane(0), let destination = rgb.plane(0) else {
            throw call.failure("decode", "CMYK frame has no buffer", .engine)
        }
        if let profile, let transform = ColourTransform(from: profile, input: inverted ? .cmykInverted : .cmyk, output: .rgb) {
            transform.apply(source, stride: cmyk.linesize(0), into: destination, stride: rgb.linesize(0),
                            width: width, height: height)
            return rgb
        }
        for y in 0..<height {
            let from = source + y * cmyk.linesize(0), to = destination + y * rgb.linesize(0)
            for x in 0..<width {
                var c = Int(from[x * 4]), m = Int(from[x * 4 + 1]), yellow = Int(from[x * 4 + 2]), k = Int(from[x * 4 + 3])
                if !inverted { c = 255 - c; m = 255 - m; yellow = 255 - yellow; k = 255 - k }
                to[x * 3] = UInt8((c * k + 127) / 255)
                to[x * 3 + 1] = UInt8((m * k + 127) / 255)
                to[x * 3 + 2] = UInt8((yellow * k + 127) / 255)
            }
        }
        return rgb
    }

    /// The full-range planar format TurboJPEG's YUV output matches for a chroma subsampling.
    static func planarFormat(subsampling: Int32) -> AVPixelFormat? {
        switch subsampling {
        case Int32(TJSAMP_444.rawValue): return AV_PIX_FMT_YUVJ444P
        case Int32(TJSAMP_422.rawValue): return AV_PIX_FMT_YUVJ422P
        case Int32(TJSAMP_420.rawValue): return AV_PIX_FMT_YUVJ420P
        case Int32(TJSAMP_440.rawValue): return AV_PIX_FMT_YUVJ440P
        case Int32(TJSAMP_411.rawValue): return AV_PIX_FMT_YUVJ411P
        case Int32(TJSAMP_GRAY.rawValue): return AV_PIX_FMT_GRAY8
        default: return nil
        }
    }
}
