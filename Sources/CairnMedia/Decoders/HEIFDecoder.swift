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
        throw self.error(error, operation)
    }

    func error(_ error: heif_error, _ operation: String) -> MediaError {
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
        return MediaError(operation: operation, reason: message, file: call.file, category: category)
    }
}

/// A parsed HEIF file (`heif_context`), freed in deinit, with what cairn read of its `meta` box itself.
final class HEIFContext {
    let pointer: OpaquePointer
    let heif: HEIFCall
    /// The file's `meta` box as cairn reads it; nil when it could not be read (libheif's view is then trusted).
    let boxes: HEIFBoxes?
    /// The file's bytes, patched, when libheif refused the file as it is (libheif reads them in place).
    private let patched: UnsafeMutableRawBufferPointer?

    init(path: String, call: FFmpegCall) throws(MediaError) {
        _ = heifInitialized
        heif = HEIFCall(call: call)
        boxes = HEIFBoxes.read(path: path)
        let first = try call.require(heif_context_alloc(), "heif_context_alloc")
        let read = heif_context_read_from_file(first, path, nil)
        if read.code == heif_error_Ok {
            pointer = first
            patched = nil
        } else {
            // The message lives in the context: copied before the context is freed.
            let refusal = heif.error(read, "heif_context_read_from_file")
            heif_context_free(first)
            // What libheif 1.15 refuses and later readers take is read again from a patched copy in memory.
            guard let bytes = HEIFRecovery.patchedFile(path: path, boxes: boxes, call: call) else { throw refusal }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
            buffer.copyBytes(from: bytes)
            guard let second = heif_context_alloc() else {
                buffer.deallocate()
                throw refusal
            }
            guard heif_context_read_from_memory_without_copy(second, buffer.baseAddress, buffer.count, nil).code == heif_error_Ok else {
                heif_context_free(second)
                buffer.deallocate()
                throw refusal
            }
            pointer = second
            patched = buffer
        }
        // One thread per decode: the pipeline already runs one file per core.
        heif_context_set_max_decoding_threads(pointer, 1)
    }

    deinit {
        heif_context_free(pointer)
        patched?.deallocate()
    }

    /// The primary image; when `pitm` names an image that is not a top-level one (a thumbnail), the first top-level
    /// image, as later libheif and its readers take it.
    func primaryImage() throws(MediaError) -> HEIFImageHandle {
        var id: heif_item_id = 0
        try heif.check(heif_context_get_primary_image_ID(pointer, &id), "heif_context_get_primary_image_ID")
        if heif_context_is_top_level_image_ID(pointer, id) == 0 {
            var first: heif_item_id = 0
            if heif_context_get_list_of_top_level_image_IDs(pointer, &first, 1) == 1 { id = first }
        }
        var handle: OpaquePointer? = nil
        try heif.check(heif_context_get_image_handle(pointer, id, &handle), "heif_context_get_image_handle")
        return HEIFImageHandle(try heif.call.require(handle, "heif_context_get_image_handle"), itemID: id, context: self)
    }
}

/// One image in a HEIF file (`heif_image_handle`): its size after irot/imir/clap, metadata, thumbnails.
final class HEIFImageHandle {
    let pointer: OpaquePointer
    let itemID: heif_item_id
    /// Handles borrow from their context, which stays alive as long as they do.
    let context: HEIFContext

    init(_ pointer: OpaquePointer, itemID: heif_item_id, context: HEIFContext) {
        self.pointer = pointer
        self.itemID = itemID
        self.context = context
    }

    deinit { heif_image_handle_release(pointer) }

    /// Size as libheif 1.15 reports it: after the file's transformations, except an `irot` listed before the `ispe`.
    var width: Int { Int(heif_image_handle_get_width(pointer)) }
    var height: Int { Int(heif_image_handle_get_height(pointer)) }

    /// Size as displayed: libheif's, turned when it left out the item's quarter turn.
    var displayed: (width: Int, height: Int) {
        context.boxes?.turnPrecedesSize(of: itemID) == true ? (height, width) : (width, height)
    }

    /// The item's own `irot`/`imir`, which libheif applies to its pixels when decoding.
    var transforms: Orientation { context.boxes?.orientation(of: itemID) ?? .identity }

    /// The part of a decoded picture that is the image: all of it, unless the decoded frame is larger than the
    /// image's size (a coded frame padded past its `ispe`). The padding follows the stored picture's right and bottom
    /// edges, wherever the item's transformations moved them; offsets are even (4:2:0 chroma).
    func content(decodedWidth: Int, decodedHeight: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let shown = displayed
        guard shown.width > 0, shown.height > 0, decodedWidth >= shown.width, decodedHeight >= shown.height,
              decodedWidth > shown.width || decodedHeight > shown.height else {
            return (0, 0, decodedWidth, decodedHeight)
        }
        let turn = transforms
        let stored = turn.displayed(width: decodedWidth, height: decodedHeight)  // a quarter turn is its own swap
        let map = turn.sourceMap(width: stored.width, height: stored.height)
        // Each displayed axis reads one stored axis, forwards (padding after the image) or backwards (before it).
        let xForwards = map.a != 0 ? map.a > 0 : map.d > 0
        let yForwards = map.b != 0 ? map.b > 0 : map.e > 0
        let x = xForwards ? 0 : (decodedWidth - shown.width) & ~1
        let y = yForwards ? 0 : (decodedHeight - shown.height) & ~1
        return (x, y, shown.width, shown.height)
    }
    var hasAlpha: Bool { heif_image_handle_has_alpha_channel(pointer) != 0 }
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

    /// The embedded thumbnails, with what must still be done to each decoded one to show it as this image is shown
    /// (its own transformations undone, this image's applied); only those of this image's displayed shape, smallest first.
    func thumbnails() -> [(handle: HEIFImageHandle, residual: Orientation)] {
        let count = heif_image_handle_get_number_of_thumbnails(pointer)
        guard count > 0 else { return [] }
        var ids = [heif_item_id](repeating: 0, count: Int(count))
        let listed = heif_image_handle_get_list_of_thumbnail_IDs(pointer, &ids, count)
        let shown = displayed
        let usable = ids.prefix(Int(listed)).compactMap { id -> (handle: HEIFImageHandle, residual: Orientation)? in
            var handle: OpaquePointer? = nil
            guard heif_image_handle_get_thumbnail(pointer, id, &handle).code == heif_error_Ok, let handle else { return nil }
            let thumbnail = HEIFImageHandle(handle, itemID: id, context: context)
            let residual = thumbnail.transforms.inverse.then(transforms)
            let size = residual.displayed(width: thumbnail.displayed.width, height: thumbnail.displayed.height)
            // The same aspect within 1 % (cameras round a thumbnail's sides: Sony's 1616x1080 of a 7008x4672 picture).
            guard size.width > 0, size.height > 0,
                  abs(size.width * shown.height - size.height * shown.width) * 100 <= size.width * shown.height
            else { return nil }
            return (thumbnail, residual)
        }
        return usable.sorted { $0.handle.width * $0.handle.height < $1.handle.width * $1.handle.height }
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
///
/// libheif applies an image's `irot` and `imir` to its pixels, in the file's order, so a decoded primary image is
/// upright; EXIF orientation is ignored, as the HEIF specification says and the reference readers (Pillow with
/// pillow-heif) do. An embedded thumbnail is turned by what differs between its transformations and the primary's.
struct HEIFDecoder {
    /// What decides between a whole decode and an embedded thumbnail (`MediaConfiguration.maxDecodeBytes`): libheif's
    /// decoded planes and its conversion's, about 4.5 bytes a pixel at 8 bits, twice that for 10/12-bit (camera .HIF,
    /// 4:2:2), which it converts through 16-bit planes. (`MemoryEstimate` holds the measured peaks, higher.)
    static func wholeDecodeBytesPerPixel(deep: Bool) -> Double { deep ? 9 : 4.5 }

    let configuration: MediaConfiguration

    func probe(path: String, brand: String?, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let context = try HEIFContext(path: path, call: call)
        let image = try context.primaryImage()
        // No pixel cap here: probing allocates nothing, and a HEIF too big to decode whole is rendered from its
        // embedded thumbnail.
        let displayed = image.displayed
        guard displayed.width > 0, displayed.height > 0 else { throw call.failure("probe", "picture has no dimensions", .corrupt) }
        let codec = brand == "avif" ? "av1" : "hevc"
        let exif = image.exif
        var probe = MediaProbe(
            container: codec == "av1" ? "avif" : "heif", kind: .photo,
            streams: [.init(index: 0, type: "video", codec: codec, width: displayed.width, height: displayed.height)],
            width: displayed.width, height: displayed.height, orientation: .identity,
            captureDate: exif?.captureTime?.sortDate, captureTime: exif?.captureTime,
            cameraMake: exif?.make, cameraModel: exif?.model, gps: exif?.gps, contentIdentifier: exif?.contentIdentifier,
            colourProfile: image.iccProfile.flatMap { ColourProfile(bytes: $0)?.name })
        probe.bitDepth = image.lumaBits > 0 ? image.lumaBits : nil
        probe.burstIdentifier = exif?.burstIdentifier
        return probe
    }

    /// The primary image, upright; an embedded thumbnail instead when it is large enough for `targetShortSide`
    /// and made the same way (the same transformations: a scaled copy), or when the primary is too big to decode.
    func decode(path: String, brand: String?, targetShortSide: Int, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let context = try HEIFContext(path: path, call: call)
        let primary = try context.primaryImage()
        let (pixels, overflow) = primary.width.multipliedReportingOverflow(by: primary.height)
        guard primary.width > 0, primary.height > 0, !overflow else {
            throw call.failure("decode", "picture claims \(primary.width)x\(primary.height) pixels", .corrupt)
        }
        let thumbnails = primary.thumbnails()
        let bytesPerPixel = Self.wholeDecodeBytesPerPixel(deep: primary.lumaBits > 8)
        let chosen: (handle: HEIFImageHandle, residual: Orientation)
        // Never upscaled: the smallest scaled copy at least the target, else the primary image.
        if let copy = thumbnails.first(where: { $0.residual == .identity && min($0.handle.width, $0.handle.height) >= targetShortSide }) {
            chosen = copy
        } else if Double(pixels) * bytesPerPixel <= Double(configuration.maxDecodeBytes) {
            chosen = (primary, .identity)
        } else if let largest = thumbnails.last {
            chosen = largest  // libheif 1.15 decodes a grid whole, with no tile-by-tile interface: too big for a lane
        } else {
            throw call.failure("decode", "HEIF of \(primary.width)x\(primary.height) needs about \(Int(Double(pixels) * bytesPerPixel) >> 20) MB "
                               + "to decode whole (above the cap of \(configuration.maxDecodeBytes >> 20) MB) and has no embedded thumbnail",
                               .tooLarge)
        }
        let image = chosen.handle
        // Without alpha, libheif's planes go straight to libswscale; with alpha, RGBA is flattened as usual.
        let planar = !image.hasAlpha && configuration.heifPlanarDecode
        let decoded = try image.decode(planar: planar)
        // A camera may code a picture in a larger frame than its `ispe` (Sony's thumbnails: 1616x1080 in 1664x1088,
        // padded with black) and libheif 1.15 does not crop it: cairn keeps the `ispe` part.
        let content = image.content(decodedWidth: Int(heif_image_get_primary_width(decoded.pointer)),
                                    decodedHeight: Int(heif_image_get_primary_height(decoded.pointer)))
        let width = content.width, height = content.height
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
            // Chroma planes of 4:2:0 are half the size: the crop's offset is halved with them.
            let (x, y) = planar && index > 0 ? (content.x / 2, content.y / 2) : (content.x, content.y)
            let start = plane + y * Int(stride) + x * (planar ? 1 : (image.hasAlpha ? 4 : 3))
            CFFmpeg_frame_borrow_plane(frame.pointer, Int32(index), UnsafeMutablePointer(mutating: start), stride)
        }
        if planar {
            let ycbcr = image.ycbcr(of: decoded)
            frame.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            frame.pointer.pointee.color_range = ycbcr.fullRange ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
            frame.pointer.pointee.colorspace = ycbcr.bt709 ? AVCOL_SPC_BT709 : AVCOL_SPC_BT470BG
        } else {
            frame.pointer.pointee.format = (image.hasAlpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24).rawValue
        }
        let profile = primary.iccProfile.flatMap { ColourProfile(bytes: $0) }.flatMap { $0.isRGB && !$0.isSRGB ? $0 : nil }
        return DecodedPicture(frame: frame, orientation: chosen.residual, file: path, profile: profile, owner: decoded)
    }
}
