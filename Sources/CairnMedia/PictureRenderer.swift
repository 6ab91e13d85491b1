import CFFmpeg

/// Makes derivative frames from one decoded picture: scaled with a good filter, alpha flattened
/// onto white, range converted, and turned the right way up.
struct PictureRenderer {
    let picture: DecodedPicture
    let call: FFmpegCall

    init(_ picture: DecodedPicture) {
        self.picture = picture
        call = FFmpegCall(file: picture.file)
    }

    /// A displayed-orientation frame of `format` (a planar 8-bit YUV format) whose stored size is
    /// `width`x`height` before turning.
    func render(storedWidth width: Int, storedHeight height: Int, format: AVPixelFormat,
                flags: Int32) throws(MediaError) -> Frame {
        let source = picture.frame
        let scaled = try Frame(width: width, height: height, format: format, call: call)
        let hasAlpha = CFFmpeg_pix_fmt_has_alpha(source.format.rawValue) != 0
        if let transfer = ToneMapping.transfer(of: source), !hasAlpha {
            // HDR video: 16-bit RGB at the target size, tone-mapped to sRGB, then the output format.
            let deep = try Frame(width: width, height: height, format: AV_PIX_FMT_RGB48LE, call: call)
            try Scaler(from: source, width: width, height: height, format: AV_PIX_FMT_RGB48LE, flags: flags, call: call)
                .scale(source, into: deep, call: call)
            let rgb = try Frame(width: width, height: height, format: AV_PIX_FMT_RGB24, call: call)
            ToneMapping.map(deep, into: rgb, transfer: transfer)
            try Scaler(from: rgb, width: width, height: height, format: format, flags: flags, call: call)
                .scale(rgb, into: scaled, call: call)
        } else if !hasAlpha, Self.isPlanarYCbCr8(source.format), let conversion = picture.yCbCrConversion() {
            // A profiled YCbCr picture (a phone's Display P3 JPEG): scaled as YCbCr, its colours converted on the
            // small frame's planes, then subsampled for the encoder; it never goes through packed RGB.
            let full = try Frame(width: width, height: height, format: AV_PIX_FMT_YUVJ444P, call: call)
            try Scaler(from: source, width: width, height: height, format: AV_PIX_FMT_YUVJ444P, flags: flags, call: call)
                .scale(source, into: full, call: call)
            conversion.apply(to: full, source: .init(source.pointer.pointee.colorspace))
            try Scaler(from: full, width: width, height: height, format: format, flags: flags, call: call)
                .scale(full, into: scaled, call: call)
        } else if hasAlpha || picture.profile != nil {
            // Alpha is flattened and colours converted on the small frame, after scaling: far less work.
            let packed = hasAlpha ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24
            var rgb = try Frame(width: width, height: height, format: packed, call: call)
            try Scaler(from: source, width: width, height: height, format: packed, flags: flags, call: call)
                .scale(source, into: rgb, call: call)
            if hasAlpha { Self.flattenOntoWhite(rgb) }
            if let transform = picture.colourTransform(hasAlpha ? .rgba : .rgb) {
                let converted = try Frame(width: width, height: height, format: packed, call: call)
                if let from = rgb.plane(0), let to = converted.plane(0) {
                    transform.apply(from, stride: rgb.linesize(0), into: to, stride: converted.linesize(0),
                                    width: width, height: height)
                    rgb = converted
                }
            }
            try Scaler(from: rgb, width: width, height: height, format: format, flags: flags, call: call)
                .scale(rgb, into: scaled, call: call)
        } else {
            try Scaler(from: source, width: width, height: height, format: format, flags: flags, call: call)
                .scale(source, into: scaled, call: call)
        }
        scaled.pointer.pointee.color_range = Scaler.isFullRangeFormat(format) ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG
        return try turned(scaled)
    }

    /// 8-bit planar YCbCr, the layout the JPEG and HEIF decoders and video posters give, whatever its subsampling.
    static func isPlanarYCbCr8(_ format: AVPixelFormat) -> Bool {
        [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUV422P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUV444P,
         AV_PIX_FMT_YUVJ444P, AV_PIX_FMT_YUV440P, AV_PIX_FMT_YUVJ440P, AV_PIX_FMT_YUV411P, AV_PIX_FMT_YUVJ411P]
            .contains(format)
    }

    /// A stored size whose displayed short side is at most `shortSide`, from the original's full size.
    func storedSize(shortSide: Int) -> (width: Int, height: Int) {
        let fitted = SizePlanning.fitShortSide(width: picture.frame.width, height: picture.storedHeight, shortSide: shortSide)
        // A panorama or a strip (16x17000) would pass WebP's 16383-pixel limit: its long side is capped.
        return SizePlanning.capLongSide(width: fitted.width, height: fitted.height, longSide: SizePlanning.maxDerivativeSide)
    }

    /// `frame` copied plane by plane into display orientation.
    private func turned(_ frame: Frame) throws(MediaError) -> Frame {
        let orientation = picture.orientation
        guard orientation != .identity else { return frame }
        let size = orientation.displayed(width: frame.width, height: frame.height)
        let result = try Frame(width: size.width, height: size.height, format: frame.format, call: call)
        result.pointer.pointee.color_range = frame.pointer.pointee.color_range
        let shiftW = Int(CFFmpeg_pix_fmt_chroma_shift_w(frame.format.rawValue))
        let shiftH = Int(CFFmpeg_pix_fmt_chroma_shift_h(frame.format.rawValue))
        for plane in 0..<3 {
            guard let from = frame.plane(plane), let to = result.plane(plane) else { continue }
            let width = plane == 0 ? frame.width : -((-frame.width) >> shiftW)
            let height = plane == 0 ? frame.height : -((-frame.height) >> shiftH)
            orientation.transform(plane: from, width: width, height: height, stride: frame.linesize(plane),
                                  into: to, destinationStride: result.linesize(plane))
        }
        return result
    }

    /// Blends straight (non-premultiplied) RGBA onto an opaque white background, in place.
    static func flattenOntoWhite(_ frame: Frame) {
        guard let base = frame.plane(0) else { return }
        let stride = frame.linesize(0)
        for y in 0..<frame.height {
            let row = base + y * stride
            for x in 0..<frame.width {
                let pixel = row + x * 4
                let alpha = Int(pixel[3])
                if alpha == 255 { continue }
                let white = 255 * (255 - alpha)
                for channel in 0..<3 {
                    pixel[channel] = UInt8((Int(pixel[channel]) * alpha + white + 127) / 255)
                }
                pixel[3] = 255
            }
        }
    }
}
