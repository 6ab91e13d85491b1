import CairnCore
import CFFmpeg
import Glibc

/// The tape's black yuv420p frame with one picture placed in its middle: fitted inside the frame keeping its
/// aspect ratio, turned the right way up, padded with black (never stretched). The frame is reused: only the
/// picture's region is written, and the encoder's reference, if it still holds one, is copied away first.
final class TapeCanvas {
    let frame: Frame
    /// Where the upright picture goes, in luma pixels (all even, for 4:2:0 chroma).
    let x, y, width, height: Int
    let orientation: Orientation
    private let call: FFmpegCall

    /// A canvas for pictures whose displayed size is `displayedWidth`x`displayedHeight` (after turning by
    /// `orientation`, and after any non-square pixel shape).
    init(settings: TapeFormat, displayedWidth: Double, displayedHeight: Double, orientation: Orientation,
         call: FFmpegCall) throws(MediaError) {
        self.call = call
        self.orientation = orientation
        guard displayedWidth > 0, displayedHeight > 0 else {
            throw call.failure("decode", "picture has no dimensions", .corrupt)
        }
        let fitted = Self.fit(width: displayedWidth, height: displayedHeight, into: settings.width, settings.height)
        width = fitted.width
        height = fitted.height
        x = ((settings.width - width) / 2) & ~1
        y = ((settings.height - height) / 2) & ~1
        frame = try Frame(width: settings.width, height: settings.height, format: AV_PIX_FMT_YUV420P, call: call)
        frame.pointer.pointee.color_range = AVCOL_RANGE_MPEG
        frame.pointer.pointee.colorspace = AVCOL_SPC_SMPTE170M
        frame.pointer.pointee.sample_aspect_ratio = AVRational(num: 1, den: 1)
        // Limited-range black: Y 16, Cb and Cr 128.
        for (plane, value) in [(0, Int32(16)), (1, 128), (2, 128)] {
            guard let data = frame.plane(plane) else { continue }
            let rows = plane == 0 ? settings.height : settings.height / 2
            memset(data, value, frame.linesize(plane) * rows)
        }
    }

    /// The largest even size with the picture's shape that fits `boxWidth`x`boxHeight`.
    static func fit(width: Double, height: Double, into boxWidth: Int, _ boxHeight: Int) -> (width: Int, height: Int) {
        let scale = min(Double(boxWidth) / width, Double(boxHeight) / height)
        let fittedWidth = min(boxWidth, max(2, Int((width * scale).rounded()) & ~1))
        let fittedHeight = min(boxHeight, max(2, Int((height * scale).rounded()) & ~1))
        return (fittedWidth, fittedHeight)
    }

    /// The stored size a source frame is scaled to so that, once turned, it fills the picture's region.
    var storedSize: (width: Int, height: Int) { orientation.swapsDimensions ? (height, width) : (width, height) }

    /// Scales a decoded source frame to `storedSize` and places it, turned, on the canvas.
    func place(source: Frame, flags: Int32) throws(MediaError) {
        let stored = storedSize
        let scaled = try Frame(width: stored.width, height: stored.height, format: AV_PIX_FMT_YUV420P, call: call)
        try Scaler(from: source, width: stored.width, height: stored.height, format: AV_PIX_FMT_YUV420P, flags: flags,
                   call: call).scale(source, into: scaled, call: call)
        try place(scaled: scaled, orientation: orientation)
    }

    /// Places a yuv420p frame already at the picture's size (stored, to be turned by `orientation`).
    func place(scaled: Frame, orientation: Orientation) throws(MediaError) {
        try call.check(av_frame_make_writable(frame.pointer), "av_frame_make_writable")
        for plane in 0..<3 {
            guard let from = scaled.plane(plane), let to = frame.plane(plane) else { continue }
            let shift = plane == 0 ? 0 : 1
            let planeWidth = scaled.width >> shift
            let planeHeight = scaled.height >> shift
            let stride = frame.linesize(plane)
            let origin = to + (y >> shift) * stride + (x >> shift)
            if orientation == .identity {
                for row in 0..<planeHeight {
                    memcpy(origin + row * stride, from + row * scaled.linesize(plane), planeWidth)
                }
            } else {
                orientation.transform(plane: from, width: planeWidth, height: planeHeight, stride: scaled.linesize(plane),
                                      into: origin, destinationStride: stride)
            }
        }
    }
}
