import CFFmpeg
import CLibRaw
import CairnCore
import Foundation

// LibRaw calls live here and nowhere else.

/// An opened camera RAW (`libraw_data_t`), freed in deinit.
final class LibRawHandle {
    let pointer: UnsafeMutablePointer<libraw_data_t>
    let call: FFmpegCall

    init(path: String, call: FFmpegCall) throws(MediaError) {
        try Self.refuseKnownHangs(path: path, call: call)
        self.call = call
        pointer = try call.require(libraw_init(0), "libraw_init")
        CLibRaw_silence(pointer)
        try check(libraw_open_file(pointer, path), "libraw_open_file")
    }

    /// LibRaw 0.20 walks a Phase One directory (any file with "IIII" or "MMMM" in its first 32 bytes) as far as
    /// its counts say, past the end of the file: 3 KB files found by fuzzing held a lane for good. A file too small
    /// to be one, a directory that cannot fit in the file, or an entry longer than the file, is refused before
    /// LibRaw opens it.
    static func refuseKnownHangs(path: String, call: FFmpegCall) throws(MediaError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }  // LibRaw reports the open failure itself
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let size = Int64(info.st_size)
        var head = [UInt8](repeating: 0, count: 32)
        guard pread(fd, &head, 32, 0) == 32 else { return }
        guard let base = (0...28).first(where: { at in
            let mark = head[at..<(at + 4)]
            return mark.elementsEqual("IIII".utf8) || mark.elementsEqual("MMMM".utf8)
        }) else { return }
        let littleEndian = head[base] == 0x49
        func word(at offset: Int64) -> UInt32? {
            var bytes = [UInt8](repeating: 0, count: 4)
            guard offset >= 0, offset + 4 <= size, pread(fd, &bytes, 4, off_t(offset)) == 4 else { return nil }
            return littleEndian
                ? UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
                : UInt32(bytes[3]) | UInt32(bytes[2]) << 8 | UInt32(bytes[1]) << 16 | UInt32(bytes[0]) << 24
        }
        // parse_phase_one: a "Raw" marker, the directory's offset from base, then its entry count (16 bytes each).
        guard let marker = word(at: Int64(base) + 4), marker >> 8 == 0x526177,
              let directory = word(at: Int64(base) + 8) else { return }
        // A Phase One back's file holds tens of megapixels: fuzzing found small files hanging this parser by
        // more than one path, so one under 1 MB is not given to it at all.
        guard size >= 1 << 20 else {
            throw call.failure("libraw_open_file", "Phase One header in a file of \(size) bytes, too small to be one", .corrupt)
        }
        let start = Int64(base) + Int64(directory)
        guard let entries = word(at: start) else { return }
        guard Int64(entries) * 16 <= max(0, size - start - 8) else {
            throw call.failure("libraw_open_file", "Phase One directory claims \(entries) entries, more than the file holds",
                               .corrupt)
        }
        // Each entry is tag, type, length, data; LibRaw reads some tags `length` times over.
        for index in 0..<Int64(entries) {
            guard let length = word(at: start + 8 + index * 16 + 8), Int64(length) > size else { continue }
            throw call.failure("libraw_open_file", "Phase One entry \(index) claims \(length) bytes, more than the file holds",
                               .corrupt)
        }
    }

    deinit { libraw_close(pointer) }

    /// The one funnel for LibRaw return codes.
    func check(_ rc: Int32, _ operation: String) throws(MediaError) {
        guard rc != LIBRAW_SUCCESS.rawValue else { return }
        let reason = libraw_strerror(rc).map { String(cString: $0) } ?? "LibRaw error \(rc)"
        let category: MediaError.Category
        switch rc {
        case LIBRAW_FILE_UNSUPPORTED.rawValue, LIBRAW_NO_THUMBNAIL.rawValue,
             LIBRAW_REQUEST_FOR_NONEXISTENT_IMAGE.rawValue: category = .unsupported
        case LIBRAW_UNSUFFICIENT_MEMORY.rawValue, LIBRAW_TOO_BIG.rawValue, LIBRAW_MEMPOOL_OVERFLOW.rawValue:
            category = .tooLarge
        case LIBRAW_IO_ERROR.rawValue: category = .io
        default: category = rc > 0 ? .unreadable : .corrupt  // positive codes are the system error of open
        }
        throw call.failure(operation, reason, category)
    }

    /// Full processed size, after the camera's flip.
    func displayedSize() throws(MediaError) -> (width: Int, height: Int) {
        var width: Int32 = 0, height: Int32 = 0
        try check(CLibRaw_displayed_size(pointer, &width, &height), "libraw_adjust_sizes_info_only")
        return (Int(width), Int(height))
    }

    /// How the sensor data (and so its embedded previews) must be turned for display.
    var orientation: Orientation {
        switch CLibRaw_flip(pointer) {
        case 3: return .rotate180
        case 5: return .rotate270
        case 6: return .rotate90
        default: return .identity
        }
    }

    static func text(_ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let text = String(cString: pointer).trimmingCharacters(in: .whitespaces)
        return text.isEmpty ? nil : text
    }
}

/// An image LibRaw made in memory (`libraw_processed_image_t`), freed in deinit.
final class LibRawImage {
    let pointer: UnsafeMutablePointer<libraw_processed_image_t>

    init(_ pointer: UnsafeMutablePointer<libraw_processed_image_t>) { self.pointer = pointer }

    deinit { libraw_dcraw_clear_mem(pointer) }

    var isJPEG: Bool { CLibRaw_processed_type(pointer) == Int32(LIBRAW_IMAGE_JPEG.rawValue) }
    var width: Int { Int(CLibRaw_processed_width(pointer)) }
    var height: Int { Int(CLibRaw_processed_height(pointer)) }
    var colours: Int { Int(CLibRaw_processed_colors(pointer)) }
    var bits: Int { Int(CLibRaw_processed_bits(pointer)) }
    var byteCount: Int { Int(CLibRaw_processed_size(pointer)) }
    var data: UnsafePointer<UInt8> { CLibRaw_processed_data(pointer) }
}

/// Camera RAW (DNG, CR2, CR3, NEF, ARW, RAF, ORF, RW2, PEF, SRW, ...) through LibRaw.
struct RawDecoder {
    let configuration: MediaConfiguration

    /// File extensions of camera RAW formats; TIFF-based ones are told from plain TIFF by name.
    static let extensions: Set<String> = [
        "dng", "cr2", "cr3", "crw", "nef", "nrw", "arw", "srf", "sr2", "raf", "orf", "rw2", "rwl", "pef",
        "srw", "3fr", "fff", "iiq", "mos", "mef", "mrw", "x3f", "erf", "kdc", "dcr",
    ]

    static func isRaw(path: String, header: [UInt8]) -> Bool {
        // The name's extension, found by bytes: every still's probe asks.
        let name = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { path[path.utf8.index(after: $0)...] } ?? path[...]
        if let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")),
           extensions.contains(name[name.utf8.index(after: dot)...].lowercased()) { return true }
        // Formats with magic of their own: Fujifilm RAF, Olympus ORF, Panasonic RW2, Canon CR3.
        func starts(_ text: [UInt8], at offset: Int = 0) -> Bool {
            header.count >= offset + text.count && Array(header[offset..<(offset + text.count)]) == text
        }
        return starts(Array("FUJIFILMCCD-RAW".utf8)) || starts([0x49, 0x49, 0x52, 0x4F]) || starts([0x49, 0x49, 0x55, 0x00])
            || (starts(Array("ftypcrx ".utf8), at: 4))
    }

    func probe(path: String, header: StillHeader, call: FFmpegCall) throws(MediaError) -> MediaProbe {
        let raw = try LibRawHandle(path: path, call: call)
        let size = try raw.displayedSize()
        try call.checkPixels(size.width, size.height, cap: configuration.maxPixels, operation: "probe")
        let exif = header.exif
        var captureTime = exif?.captureTime
        if captureTime == nil, let wall = Self.wallClock(CLibRaw_timestamp(raw.pointer)) {
            var parsed = ExifSummary()
            parsed.dateTimeOriginal = wall
            captureTime = CaptureTime.exif(parsed, source: "raw")
        }
        var valid: Int32 = 0
        let latitude = CLibRaw_latitude(raw.pointer, &valid)
        let gps = exif?.gps ?? (valid != 0 && (latitude != 0 || CLibRaw_longitude(raw.pointer) != 0)
            ? GPSCoordinate(latitude: latitude, longitude: CLibRaw_longitude(raw.pointer)) : nil)
        return MediaProbe(
            container: "raw", kind: .photo,
            streams: [.init(index: 0, type: "video", codec: "raw", width: size.width, height: size.height)],
            width: size.width, height: size.height, orientation: raw.orientation, captureDate: captureTime?.sortDate,
            captureTime: captureTime,
            cameraMake: LibRawHandle.text(CLibRaw_make(raw.pointer)) ?? exif?.make,
            cameraModel: LibRawHandle.text(CLibRaw_model(raw.pointer)) ?? exif?.model,
            gps: gps, lens: LibRawHandle.text(CLibRaw_lens(raw.pointer)))
    }

    /// The largest embedded JPEG preview when it is at least `targetShortSide` (or nearly as big as a half-size
    /// demosaic), else a half-size demosaic.
    func decode(path: String, targetShortSide: Int, call: FFmpegCall) throws(MediaError) -> DecodedPicture {
        let raw = try LibRawHandle(path: path, call: call)
        // Sensor size, not libraw_adjust_sizes_info_only: that call is for probing and forbids unpacking after it.
        try call.checkPixels(Int(CLibRaw_sensor_width(raw.pointer)), Int(CLibRaw_sensor_height(raw.pointer)),
                             cap: configuration.maxPixels, operation: "decode")
        if let preview = try embeddedPreview(raw, targetShortSide: targetShortSide, call: call) { return preview }

        CLibRaw_configure_preview(raw.pointer)
        do {
            try raw.check(libraw_unpack(raw.pointer), "libraw_unpack")
            try raw.check(libraw_dcraw_process(raw.pointer), "libraw_dcraw_process")
        } catch {
            throw call.failure("decode", "camera RAW with no usable image: no embedded preview of \(targetShortSide) px or more, "
                               + "and its sensor data does not decode (LibRaw: \(error.reason))",
                               error.category == .io ? .io : .unsupported)
        }
        var rc: Int32 = 0
        guard let made = libraw_dcraw_make_mem_image(raw.pointer, &rc) else {
            try raw.check(rc == 0 ? LIBRAW_UNSPECIFIED_ERROR.rawValue : rc, "libraw_dcraw_make_mem_image")
            throw call.failure("libraw_dcraw_make_mem_image", "no image", .corrupt)
        }
        let image = LibRawImage(made)
        guard image.colours == 3, image.bits == 8, image.byteCount >= image.width * image.height * 3 else {
            throw call.failure("libraw_dcraw_make_mem_image", "unexpected \(image.colours)x\(image.bits)-bit image", .unsupported)
        }
        // LibRaw's memory image is already turned by the camera's flip; it is packed RGB, borrowed in place.
        let frame = try Frame(call: call)
        frame.pointer.pointee.width = Int32(image.width)
        frame.pointer.pointee.height = Int32(image.height)
        frame.pointer.pointee.format = AV_PIX_FMT_RGB24.rawValue
        CFFmpeg_frame_borrow_plane(frame.pointer, 0, UnsafeMutablePointer(mutating: image.data), Int32(image.width * 3))
        return DecodedPicture(frame: frame, orientation: .identity, file: path, owner: image)
    }

    private func embeddedPreview(_ raw: LibRawHandle, targetShortSide: Int,
                                 call: FFmpegCall) throws(MediaError) -> DecodedPicture? {
        guard libraw_unpack_thumb(raw.pointer) == LIBRAW_SUCCESS.rawValue,
              CLibRaw_thumbnail_format(raw.pointer) == Int32(LIBRAW_THUMBNAIL_JPEG.rawValue)
        else { return nil }
        var rc: Int32 = 0
        guard let made = libraw_dcraw_make_mem_thumb(raw.pointer, &rc) else { return nil }
        let image = LibRawImage(made)
        guard image.isJPEG, image.byteCount > 0 else { return nil }
        let header = StillHeader(bytes: UnsafeBufferPointer(start: image.data, count: image.byteCount))
        // Good enough when it covers the target, or when the half-size demosaic (the most the other path gives)
        // would hardly be bigger: the camera's own rendering then beats LibRaw's generic one, at a tenth of the cost.
        let halfSize = min(Int(CLibRaw_sensor_width(raw.pointer)), Int(CLibRaw_sensor_height(raw.pointer))) / 2
        guard let width = header.width, let height = header.height,
              min(width, height) >= min(targetShortSide, halfSize * 9 / 10) else { return nil }
        let jpeg = JPEGDecoder(configuration: configuration)
        guard let picture = try? jpeg.decode(image.data, count: image.byteCount, header: header,
                                            targetShortSide: targetShortSide, call: call)
        else { return nil }
        // Previews are stored as the sensor sees the scene; the camera's flip turns them (their own EXIF, if any, wins).
        let orientation = header.exif.map(\.orientation).flatMap { $0 == .identity ? nil : $0 } ?? raw.orientation
        return DecodedPicture(frame: picture.frame, orientation: orientation, file: call.file, profile: picture.profile)
    }

    /// LibRaw reads EXIF times with mktime (local time); turn the instant back into the wall clock the camera wrote.
    static func wallClock(_ timestamp: Int64) -> String? {
        guard timestamp > 0 else { return nil }
        let wall = UTCOffset.local.civilTime(Date(timeIntervalSince1970: Double(timestamp)))
        return wall.dateText.replacingOccurrences(of: "-", with: ":") + " " + wall.clockText
    }
}
