/// How a stored picture must be turned to be displayed the right way up (EXIF orientation 1...8).
public enum Orientation: Int, Codable, Sendable, CaseIterable {
    case identity = 1
    case flipHorizontal = 2
    case rotate180 = 3
    case flipVertical = 4
    /// Mirror over the top-left/bottom-right diagonal.
    case transpose = 5
    /// Rotate 90 degrees clockwise (a phone held upright, home button at the bottom).
    case rotate90 = 6
    /// Mirror over the top-right/bottom-left diagonal.
    case transverse = 7
    /// Rotate 90 degrees counterclockwise.
    case rotate270 = 8

    public static let up = Orientation.identity

    init?(exifValue: Int) { self.init(rawValue: exifValue) }

    /// The orientation for a video display matrix whose rotation is `counterclockwiseDegrees`
    /// (as `av_display_rotation_get` reports it); flips are not modelled for video.
    init(counterclockwiseDegrees: Double) {
        guard counterclockwiseDegrees.isFinite else { self = .identity; return }
        let clockwise = ((-Int(counterclockwiseDegrees.rounded()) % 360) + 360) % 360
        switch clockwise {
        case 45..<135: self = .rotate90
        case 135..<225: self = .rotate180
        case 225..<315: self = .rotate270
        default: self = .identity
        }
    }

    /// True when displaying swaps width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The displayed size of a stored `width`x`height` picture.
    public func displayed(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsDimensions ? (height, width) : (width, height)
    }

    /// Where displayed pixel (x, y) comes from in a stored `width`x`height` plane, as an affine map:
    /// source x = a*x + b*y + c, source y = d*x + e*y + f.
    func sourceMap(width w: Int, height h: Int) -> (a: Int, b: Int, c: Int, d: Int, e: Int, f: Int) {
        switch self {
        case .identity: return (1, 0, 0, 0, 1, 0)
        case .flipHorizontal: return (-1, 0, w - 1, 0, 1, 0)
        case .rotate180: return (-1, 0, w - 1, 0, -1, h - 1)
        case .flipVertical: return (1, 0, 0, 0, -1, h - 1)
        case .transpose: return (0, 1, 0, 1, 0, 0)
        case .rotate90: return (0, 1, 0, -1, 0, h - 1)
        case .transverse: return (0, -1, w - 1, -1, 0, h - 1)
        case .rotate270: return (0, -1, w - 1, 1, 0, 0)
        }
    }

    /// Copies a stored one-byte-per-sample plane into `destination`, turned for display.
    func transform(plane source: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int,
                   into destination: UnsafeMutablePointer<UInt8>, destinationStride: Int) {
        let (outWidth, outHeight) = displayed(width: width, height: height)
        let m = sourceMap(width: width, height: height)
        // Stepping x by one moves the source by a columns and d rows.
        let step = m.a + m.d * stride
        for y in 0..<outHeight {
            var from = (m.b * y + m.c) + (m.e * y + m.f) * stride
            let line = destination + y * destinationStride
            for x in 0..<outWidth {
                line[x] = source[from]
                from += step
            }
        }
    }
}
