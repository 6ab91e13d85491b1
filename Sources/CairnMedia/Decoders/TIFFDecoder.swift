import CFFmpeg
import CTIFF
import Foundation

// libtiff calls live here and nowhere else. FFmpeg's TIFF decoder misses Lab, BigTIFF, old-style JPEG and
// more; libtiff is the format's reference implementation.

private let tiffSilenced: Void = { CTIFF_silence() }()

/// An open TIFF (`TIFF *`), closed in deinit; its first image is the picture.
final class TIFFHandle {
    let pointer: OpaquePointer

    init(path: String, call: FFmpegCall) throws(MediaError) {
        _ = tiffSilenced
        guard let handle = TIFFOpen(path, "r") else {
            throw call.failure("TIFFOpen", "not a TIFF libtiff can open", .corrupt)
        }
        pointer = handle
    }

    deinit { TIFFClose(pointer) }

    func size(call: FFmpegCall) throws(MediaError) -> (width: Int, height: Int) {
        var width: UInt32 = 0, height: UInt32 = 0
        guard CTIFF_dimensions(pointer, &width, &height) != 0 else {
            throw call.failure("TIFFGetField", "TIFF without image width and length", .corrupt)
        }
        return (Int(width), Int(height))
    }

    /// The file's Orientation tag (EXIF's numbering).
    var orientation: Orientation { Orientation(exifValue: Int(CTIFF_orientation(pointer))) ?? .identity }
}

/// A plain heap buffer for a decoder that writes one unpadded raster, freed in deinit.
final class PixelBuffer {
    let bytes: UnsafeMutablePointer<UInt8>

    init(byteCount: Int, call: FFmpegCall) throws(MediaError) {
        guard byteCount > 0, let memory = malloc(byteCount) else {
            throw call.failure("malloc", "cannot allocate \(byteCount) bytes for the picture", .io)
        }
        bytes = memory.assumingMemoryBound(to: UInt8.self)
    }

    deinit { free(bytes) }
}

struct TIFFDecoder {
    let configuration: MediaConfiguration

    /// The first image, decoded by libtiff to RGBA and turned upright by libtiff itself.
    func decode(path: String, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let tiff = try TIFFHandle(path: path, call: call)
        let size = try tiff.size(call: call)
        try call.checkPixels(size.width, size.height, cap: configuration.maxPixels, operation: "decode")
        var reason = [CChar](repeating: 0, count: 1024)
        guard TIFFRGBAImageOK(tiff.pointer, &reason) != 0 else {
            let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw call.failure("TIFFRGBAImageOK", text.isEmpty ? "TIFF layout libtiff cannot render" : text, .unsupported)
        }
        // libtiff applies the Orientation tag: the stored size may be turned.
        let upright = tiff.orientation.displayed(width: size.width, height: size.height)
        // libtiff wants one unpadded raster; the frame borrows it.
        let raster = try PixelBuffer(byteCount: upright.width * upright.height * 4, call: call)
        let ok = raster.bytes.withMemoryRebound(to: UInt32.self, capacity: upright.width * upright.height) { pixels in
            CTIFF_read_rgba_upright(tiff.pointer, UInt32(upright.width), UInt32(upright.height), pixels)
        }
        guard ok != 0 else { throw call.failure("TIFFReadRGBAImageOriented", "TIFF data does not decode", .corrupt) }
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = Int32(upright.width)
        frame.pointer.pointee.height = Int32(upright.height)
        frame.pointer.pointee.format = AV_PIX_FMT_RGBA.rawValue
        CFFmpeg_frame_borrow_plane(frame.pointer, 0, raster.bytes, Int32(upright.width * 4))
        return DecodedPicture(frame: frame, orientation: .identity, file: path, owner: raster)
    }

    /// A one-sample picture of 32-bit integers or floats (scientific and scanner output), which neither libtiff's
    /// RGBA interface nor FFmpeg renders: read by scanline and stretched from its darkest to its brightest value
    /// into 8-bit grey, since such samples carry no display range of their own. Nil for any other layout.
    func decodeScalar(path: String, call: FFmpegCall) throws(MediaError) -> DecodedPicture? {
        let tiff = try TIFFHandle(path: path, call: call)
        let size = try tiff.size(call: call)
        var bits: UInt16 = 0, samples: UInt16 = 0, format: UInt16 = 0
        var tiled: Int32 = 0
        CTIFF_sample_layout(tiff.pointer, &bits, &samples, &format, &tiled)
        guard bits == 32, samples == 1, tiled == 0,
              [UInt16(SAMPLEFORMAT_UINT), UInt16(SAMPLEFORMAT_INT), UInt16(SAMPLEFORMAT_IEEEFP)].contains(format) else { return nil }
        try call.checkPixels(size.width, size.height, cap: configuration.maxPixels, operation: "decode")
        guard size.width * size.height * 4 <= configuration.maxDecodeBytes else {
            throw call.failure("decode", "32-bit TIFF of \(size.width)x\(size.height) above the decode budget", .unsupported)
        }
        var values = [Float](repeating: 0, count: size.width * size.height)
        var scanline = [UInt32](repeating: 0, count: max(size.width, Int(TIFFScanlineSize(tiff.pointer) / 4)))
        for y in 0..<size.height {
            guard TIFFReadScanline(tiff.pointer, &scanline, UInt32(y), 0) == 1 else {
                throw call.failure("TIFFReadScanline", "TIFF data does not decode", .corrupt)
            }
            for x in 0..<size.width {
                let word = scanline[x]
                values[y * size.width + x] = switch Int32(format) {
                case SAMPLEFORMAT_IEEEFP: Float(bitPattern: word)
                case SAMPLEFORMAT_INT: Float(Int32(bitPattern: word))
                default: Float(word)
                }
            }
        }
        let finite = values.filter { $0.isFinite }
        let low = finite.min() ?? 0, high = finite.max() ?? 0
        let scale = high > low ? 255 / (high - low) : 0
        let grey = try PixelBuffer(byteCount: size.width * size.height, call: call)
        for (index, value) in values.enumerated() {
            grey.bytes[index] = value.isFinite ? UInt8(((value - low) * scale).rounded()) : 0
        }
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = Int32(size.width)
        frame.pointer.pointee.height = Int32(size.height)
        frame.pointer.pointee.format = AV_PIX_FMT_GRAY8.rawValue
        CFFmpeg_frame_borrow_plane(frame.pointer, 0, grey.bytes, Int32(size.width))
        return DecodedPicture(frame: frame, orientation: tiff.orientation, file: path, owner: grey)
    }

    func probe(path: String, header: StillHeader, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let tiff = try TIFFHandle(path: path, call: call)
        let size = try tiff.size(call: call)
        try call.checkPixels(size.width, size.height, cap: configuration.maxPixels, operation: "probe")
        let orientation = tiff.orientation
        let displayed = orientation.displayed(width: size.width, height: size.height)
        let exif = header.exif
        return MediaProbe(
            container: "tiff", kind: .photo,
            streams: [.init(index: 0, type: "video", codec: "tiff", width: size.width, height: size.height)],
            width: displayed.width, height: displayed.height, orientation: orientation,
            captureDate: exif?.captureTime?.sortDate, captureTime: exif?.captureTime,
            cameraMake: exif?.make, cameraModel: exif?.model, gps: exif?.gps)
    }
}
