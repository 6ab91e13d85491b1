import CFFmpeg
import CHeif
import CairnCore
import Foundation

// libheif calls live here and nowhere else. HEIC (HEVC through libde265) and AVIF (AV1 through dav1d).

/// libheif is initialised once per process (it counts references; never deinitialised, like FFmpeg's tables).
private let heifInitialized: Void = { _ = heif_init(nil) }()

/// The one funnel for libheif's `heif_error` results.
struct HEIFCall {
    let call: FFmpegCall

    func check(_ error: heif_error, _ operation: String) throws(MediaError) {
        guard error.code != heif_error_Ok else { return }
        // libheif's messages may span lines; a reason is one line.
        let message = (error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")
            .split(whereSeparator: \.isNewline).joined(separator: " ")
        let category: MediaError.Category
        switch error.code {
        case heif_error_Input_does_not_exist: category = .unreadable
        case heif_error_Unsupported_filetype, heif_error_Unsupported_feature, heif_error_Plugin_loading_error:
            category = .unsupported
        case heif_error_Memory_allocation_error: category = .io
        default: category = .corrupt
        }
        throw MediaError(operation: operation, reason: message, file: call.file, category: category)
    }
}

/// A parsed HEIF file (`heif_context`), freed in deinit.
final class HEIFContext {
    let pointer: OpaquePointer
    let heif: HEIFCall

    init(path: String, call: FFmpegCall) throws(MediaError) {
        _ = heifInitialized
        heif = HEIFCall(call: call)
        pointer = try call.require(heif_context_alloc(), "heif_context_alloc")
        try heif.check(heif_context_read_from_file(pointer, path, nil), "heif_context_read_from_file")
        // One thread per decode: the pipeline already runs one file per core.
        heif_context_set_max_decoding_threads(pointer, 1)
    }

    deinit { heif_context_free(pointer) }

    func primaryImage() throws(MediaError) -> HEIFImageHandle {
        var handle: OpaquePointer? = nil
        try heif.check(heif_context_get_primary_image_handle(pointer, &handle), "heif_context_get_primary_image_handle")
        return HEIFImageHandle(try heif.call.require(handle, "heif_context_get_primary_image_handle"), context: self)
    }
}

/// One image in a HEIF file (`heif_image_handle`): its size after irot/imir/clap, metadata, thumbnails.
final class HEIFImageHandle {
    let pointer: OpaquePointer
    /// Handles borrow from their context, which stays alive as long as they do.
    let context: HEIFContext

    init(_ pointer: OpaquePointer, context: HEIFContext) {
        self.pointer = pointer
        self.context = context
    }

    deinit { heif_image_handle_release(pointer) }

    /// Size as displayed: libheif reports it after the file's transformations.
    var width: Int { Int(heif_image_handle_get_width(pointer)) }
    var height: Int { Int(heif_image_handle_get_height(pointer)) }
    var hasAlpha: Bool { heif_image_handle_has_alpha_channel(pointer) != 0 }
    /// Size before transformations (the `ispe` box).
    var storedWidth: Int { Int(heif_image_handle_get_ispe_width(pointer)) }
    var storedHeight: Int { Int(heif_image_handle_get_ispe_height(pointer)) }
    var lumaBits: Int { Int(heif_image_handle_get_luma_bits_per_pixel(pointer)) }

    /// The first metadata block of `type` ("Exif"), or nil.
    func metadata(type: String) -> [UInt8]? {
        let count = heif_image_handle_get_number_of_metadata_blocks(pointer, type)
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        guard heif_image_handle_get_list_of_metadata_block_IDs(pointer, type, &ids, count) > 0 else { return nil }
        let size = heif_image_handle_get_metadata_size(pointer, ids[0])
        guard size > 0, size < 16 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(pointer, ids[0], &bytes).code == heif_error_Ok else { return nil }
        return bytes
    }

    /// The EXIF block: libheif's "Exif" item starts with a 4-byte offset to the TIFF header.
    var exif: ExifSummary? {
        guard let block = metadata(type: "Exif"), block.count > 8 else { return nil }
        let offset = Int(block[0]) << 24 | Int(block[1]) << 16 | Int(block[2]) << 8 | Int(block[3])
        guard offset >= 0, 4 + offset < block.count else { return nil }
        return ExifReader(tiff: Array(block[(4 + offset)...]))?.summary()
    }

    /// The embedded ICC profile (`colr` of type `prof` or `rICC`), when there is one.
    var iccProfile: [UInt8]? {
        let type = heif_image_handle_get_color_profile_type(pointer)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(pointer)
        guard size > 0, size < 4 << 20 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_raw_color_profile(pointer, &bytes).code == heif_error_Ok else { return nil }
        return bytes
    }

    /// The smallest embedded thumbnail whose short side is at least `shortSide` (0: the largest), or nil.
    func thumbnail(atLeast shortSide: Int) -> HEIFImageHandle? {
        let count = heif_image_handle_get_number_of_thumbnails(pointer)
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        let listed = heif_image_handle_get_list_of_thumbnail_IDs(pointer, &ids, count)
        var best: HEIFImageHandle?
        for id in ids.prefix(Int(listed)) {
            var handle: OpaquePointer? = nil
            guard heif_image_handle_get_thumbnail(pointer, id, &handle).code == heif_error_Ok, let handle else { continue }
            let candidate = HEIFImageHandle(handle, context: context)
            guard min(candidate.width, candidate.height) >= shortSide else { continue }
            let pixels = candidate.width * candidate.height, bestPixels = best.map { $0.width * $0.height }
            if let bestPixels, shortSide == 0 ? pixels <= bestPixels : pixels >= bestPixels { continue }
            best = candidate
        }
        return best
    }

    /// Decodes with irot/imir/clap applied and 10/12-bit mapped to 8-bit: to interleaved RGB(A), or with
    /// `planar` to 4:2:0 YCbCr planes (a third of the memory, and libswscale converts after scaling instead).
    func decode(planar: Bool = false) throws(MediaError) -> HEIFImage {
        let options = heif_decoding_options_alloc()
        defer { heif_decoding_options_free(options) }
        options?.pointee.convert_hdr_to_8bit = 1
        var image: OpaquePointer? = nil
        let (space, chroma) = planar ? (heif_colorspace_YCbCr, heif_chroma_420)
            : (heif_colorspace_RGB, hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB)
        try context.heif.check(heif_decode_image(pointer, &image, space, chroma, options), "heif_decode_image")
        return HEIFImage(try context.heif.call.require(image, "heif_decode_image"))
    }

    /// The YCbCr matrix and range the stream uses: the decoded image's nclx, else the file's `colr` nclx box,
    /// else libheif's own assumption (BT.601, full range), as its RGB conversion would use.
    func ycbcr(of image: HEIFImage) -> (bt709: Bool, fullRange: Bool) {
        var profile: UnsafeMutablePointer<heif_color_profile_nclx>? = nil
        if heif_image_get_nclx_color_profile(image.pointer, &profile).code != heif_error_Ok || profile == nil {
            profile = nil
            _ = heif_image_handle_get_nclx_color_profile(pointer, &profile)
        }
        guard let nclx = profile else { return (false, true) }
        defer { heif_nclx_color_profile_free(nclx) }
        return (nclx.pointee.matrix_coefficients == heif_matrix_coefficients_ITU_R_BT_709_5, nclx.pointee.full_range_flag != 0)
    }
}

/// A decoded picture (`heif_image`), freed in deinit.
final class HEIFImage {
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { heif_image_release(pointer) }
}

/// HEIF/HEIC/AVIF probing and decoding for the engine.
struct HEIFDecoder {
    let configuration: MediaConfiguration

    /// How the decoded picture must still be turned. libheif applies `irot`/`imir`, and then EXIF orientation
    /// must be ignored (iPhones write both). Cameras that write HEIC without a transform box (Sony, Canon .HIF)
    /// rely on EXIF orientation, as Pillow with pillow-heif does; AVIF files follow their boxes only.
    static func residualOrientation(path: String, brand: String?, exif: ExifSummary?, call: FFmpegCall) -> Orientation {
        guard brand != "avif", let exif, exif.orientation != .identity else { return .identity }
        // Unreadable means unknown: then the boxes are trusted, as the HEIF specification says.
        guard let meta = metaBox(path: path) else { return .identity }
        let transforms = [Array("irot".utf8), Array("imir".utf8)]
        let hasTransformBox = transforms.contains { box in meta.firstRange(of: box) != nil }
        return hasTransformBox ? .identity : exif.orientation
    }

    /// The top-level `meta` box's bytes (at most 16 MB), wherever it sits in the file (cameras may put it after `mdat`).
    static func metaBox(path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var offset: off_t = 0
        var header = [UInt8](repeating: 0, count: 16)
        for _ in 0..<64 {
            guard pread(fd, &header, 16, offset) >= 8 else { return nil }
            var size = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 { size = header[8..<16].reduce(0) { $0 << 8 | Int($1) } }
            if type == "meta" {
                let length = size == 0 ? 16 << 20 : min(size, 16 << 20)
                var bytes = [UInt8](repeating: 0, count: length)
                let read = pread(fd, &bytes, length, offset)
                return read > 0 ? Array(bytes.prefix(read)) : nil
            }
            guard size >= 8 else { return nil }
            offset += off_t(size)
        }
        return nil
    }

    /// The quarter turn libheif 1.15 left out of the primary image: a Sony .HIF lists its `irot` before its
    /// `ispe` and is reported (and decoded) at the stored size, where Pillow with libheif 1.23 turns it.
    static func unappliedQuarterTurn(_ primary: HEIFImageHandle, path: String, call: FFmpegCall) -> Orientation? {
        guard primary.width != primary.height, primary.width == primary.storedWidth,
              primary.height == primary.storedHeight else { return nil }
        return quarterTurn(path: path, call: call)
    }

    /// The display turn of the file's first quarter-turn `irot` box, as an orientation, or nil.
    static func quarterTurn(path: String, call: FFmpegCall) -> Orientation? {
        guard let head = metaBox(path: path),
              let at = head.firstRange(of: Array("irot".utf8))?.lowerBound, at + 4 < head.count else { return nil }
        switch head[at + 4] & 0x03 {
        case 1: return .rotate270  // 90 degrees counterclockwise
        case 3: return .rotate90
        default: return nil
        }
    }

    func probe(path: String, brand: String?, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let context = try HEIFContext(path: path, call: call)
        let image = try context.primaryImage()
        // No pixel cap here: probing allocates nothing, and a HEIF too big to decode whole is rendered from its
        // embedded thumbnail.
        guard image.width > 0, image.height > 0 else { throw call.failure("probe", "picture has no dimensions", .corrupt) }
        let codec = brand == "avif" ? "av1" : "hevc"
        let exif = image.exif
        let orientation = Self.unappliedQuarterTurn(image, path: path, call: call)
            ?? Self.residualOrientation(path: path, brand: brand, exif: exif, call: call)
        let upright = (width: image.width, height: image.height)
        let displayed = orientation.displayed(width: upright.width, height: upright.height)
        return MediaProbe(
            container: codec == "av1" ? "avif" : "heif", kind: .photo,
            streams: [.init(index: 0, type: "video", codec: codec, width: image.width, height: image.height)],
            width: displayed.width, height: displayed.height, orientation: orientation,
            captureDate: exif?.captureTime?.sortDate, captureTime: exif?.captureTime,
            cameraMake: exif?.make, cameraModel: exif?.model, gps: exif?.gps, contentIdentifier: exif?.contentIdentifier,
            colourProfile: image.iccProfile.flatMap { ColourProfile(bytes: $0)?.name })
    }

    /// The primary image, upright; the embedded thumbnail instead when it is large enough for `targetShortSide`.
    func decode(path: String, brand: String?, targetShortSide: Int, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let context = try HEIFContext(path: path, call: call)
        let primary = try context.primaryImage()
        let (pixels, overflow) = primary.width.multipliedReportingOverflow(by: primary.height)
        guard primary.width > 0, primary.height > 0, !overflow else {
            throw call.failure("decode", "picture claims \(primary.width)x\(primary.height) pixels", .corrupt)
        }
        // Thumbnails are stored upright in the same colours; never upscaled: only one at least the target.
        var chosen = primary.thumbnail(atLeast: targetShortSide) ?? primary
        // libheif holds the decoded planes and its conversion's: about 4.5 bytes a pixel at 8 bits, twice that for
        // 10/12-bit (camera .HIF, 4:2:2), which it converts through 16-bit planes.
        let bytesPerPixel = primary.lumaBits > 8 ? 9.0 : 4.5
        if chosen === primary, Double(pixels) * bytesPerPixel > Double(configuration.maxDecodeBytes) {
            // libheif 1.15 decodes a grid whole, with no tile-by-tile interface: too big for a lane's memory.
            guard let largest = primary.thumbnail(atLeast: 0) else {
                throw call.failure("decode", "HEIF of \(primary.width)x\(primary.height) needs about \(Int(Double(pixels) * bytesPerPixel) >> 20) MB "
                                   + "to decode whole (above the cap of \(configuration.maxDecodeBytes >> 20) MB) and has no embedded thumbnail",
                                   .tooLarge)
            }
            chosen = largest
        }
        // Without alpha, libheif's planes go straight to libswscale; with alpha, RGBA is flattened as usual.
        let planar = !chosen.hasAlpha && configuration.heifPlanarDecode
        let decoded = try chosen.decode(planar: planar)
        let width = Int(heif_image_get_primary_width(decoded.pointer))
        let height = Int(heif_image_get_primary_height(decoded.pointer))
        // The frame borrows libheif's buffers (no copy); the picture keeps the image alive.
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = Int32(width)
        frame.pointer.pointee.height = Int32(height)
        let channels = planar ? [heif_channel_Y, heif_channel_Cb, heif_channel_Cr] : [heif_channel_interleaved]
        for (index, channel) in channels.enumerated() {
            var stride: Int32 = 0
            guard let plane = heif_image_get_plane_readonly(decoded.pointer, channel, &stride) else {
                throw call.failure("heif_image_get_plane_readonly", "decoded image has no pixels", .corrupt)
            }
            CFFmpeg_frame_borrow_plane(frame.pointer, Int32(index), UnsafeMutablePointer(mutating: plane), stride)
        }
        if planar {
            let ycbcr = chosen.ycbcr(of: decoded)
            frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            frame.pointer.pointee.color_range = ycbcr.fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
            frame.pointer.pointee.colorspace = ycbcr.bt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_BT470BG
        } else {
            frame.pointer.pointee.format = (chosen.hasAlpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24).rawValue
        }
        let profile = primary.iccProfile.flatMap { ColourProfile(bytes: $0) }.flatMap { $0.isRGB && !$0.isSRGB ? $0 : nil }
        let primaryTurn = Self.unappliedQuarterTurn(primary, path: path, call: call)
        var orientation = primaryTurn ?? Self.residualOrientation(path: path, brand: brand, exif: primary.exif, call: call)
        // libheif 1.15 turns some images and not others: a thumbnail must end in the primary's upright shape.
        if chosen !== primary, (width > height) != (primary.width > primary.height), width != height {
            if primaryTurn != nil {
                orientation = .identity  // the thumbnail was turned, the primary was not
            } else if let turn = Self.quarterTurn(path: path, call: call) {
                orientation = turn  // the primary was turned, the thumbnail was not
            }
        }
        return DecodedPicture(frame: frame, orientation: orientation, file: path, profile: profile, owner: decoded)
    }
}
