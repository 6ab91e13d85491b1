import CFFmpeg

/// A matrix-shaper profile's colours converted to sRGB on full-range YCbCr 4:4:4 planes, in place, in one pass:
/// each pixel to RGB, through the profile's curves to linear light, through one matrix into sRGB's primaries,
/// through sRGB's curve and back to YCbCr (BT.601, as every derivative is encoded). The picture then never goes
/// through packed RGB, whose conversions swscale does without SIMD. The numbers are lcms2's own (curves and
/// colorants read from the profile) at its matrix-shaper precision (1.14 fixed point); profiles of any other kind
/// keep the RGB route through an lcms2 transform.
struct YCbCrColourConversion {
    /// Fixed point of the linear values and the matrix: lcms2's for 8-bit matrix-shaper transforms.
    private static let one: Int32 = 1 << 14

    /// sRGB's 8-bit code of each linear value, the same for every picture.
    private static let encoding: [UInt8]? = ColourProfile.sRGBEncoding(count: Int(one) + 1)

    /// The profile's linear value of each 8-bit code, per channel (red, green, blue), in 1.14.
    private let linear: [Int32]
    /// The profile's linear RGB to sRGB's, row by row, in 1.14.
    private let matrix: [Int32]
    private let encoding: [UInt8]

    init?(_ shaper: MatrixShaper) {
        guard let encoding = Self.encoding, let sRGB = ColourProfile.sRGB()?.matrixShaper,
              let fromXYZ = Self.inverse(sRGB.toXYZ)
        else { return nil }
        let product = (0..<3).map { row in
            (0..<3).map { column in (0..<3).reduce(0.0) { $0 + fromXYZ[row][$1] * shaper.toXYZ[$1][column] } }
        }
        let scale = Double(Self.one)
        linear = shaper.linear.flatMap { curve in curve.map { Int32((min(1, max(0, $0)) * scale).rounded()) } }
        matrix = product.flatMap { $0.map { Int32(($0 * scale).rounded()) } }
        self.encoding = encoding
    }

    /// The YCbCr matrix a source's frame is in (BT.709 for HD video, BT.2020 for HDR phone video, else BT.601, as
    /// the scaler reads it), as its luma weights of red and blue.
    struct SourceMatrix {
        var red: Double
        var blue: Double

        init(_ space: AVColorSpace) {
            switch space {
            case AVCOL_SPC_BT709: (red, blue) = (0.2126, 0.0722)
            case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: (red, blue) = (0.2627, 0.0593)
            default: (red, blue) = (0.299, 0.114)
            }
        }
    }

    /// Converts `frame` (full-range planar YCbCr 4:4:4, 8-bit, in `source`'s matrix) in place.
    func apply(to frame: Frame, source: SourceMatrix) {
        guard let yPlane = frame.plane(0), let cbPlane = frame.plane(1), let crPlane = frame.plane(2) else { return }
        let green = 1 - source.red - source.blue
        func q16(_ value: Double) -> Int32 { Int32((value * 65536).rounded()) }
        let crToRed = q16(2 * (1 - source.red)), cbToBlue = q16(2 * (1 - source.blue))
        let cbToGreen = q16(2 * source.blue * (1 - source.blue) / green)
        let crToGreen = q16(2 * source.red * (1 - source.red) / green)
        let (yStride, cbStride, crStride) = (frame.linesize(0), frame.linesize(1), frame.linesize(2))
        let width = frame.width, height = frame.height
        let m = matrix, one = Self.one
        linear.withUnsafeBufferPointer { linear in
            encoding.withUnsafeBufferPointer { encode in
                @inline(__always) func byte(_ value: Int32) -> Int32 { min(255, max(0, value)) }
                @inline(__always) func sRGB(_ value: Int32) -> Int32 {
                    Int32(encode[Int(min(one, max(0, (value &+ 8192) &>> 14)))])
                }
                for row in 0..<height {
                    let y = yPlane + row * yStride, cb = cbPlane + row * cbStride, cr = crPlane + row * crStride
                    for x in 0..<width {
                        let luma = Int32(y[x]) &<< 16 &+ 32768
                        let blueDifference = Int32(cb[x]) &- 128, redDifference = Int32(cr[x]) &- 128
                        let r = byte((luma &+ crToRed &* redDifference) &>> 16)
                        let g = byte((luma &- cbToGreen &* blueDifference &- crToGreen &* redDifference) &>> 16)
                        let b = byte((luma &+ cbToBlue &* blueDifference) &>> 16)
                        let lr = linear[Int(r)], lg = linear[256 + Int(g)], lb = linear[512 + Int(b)]
                        let red = sRGB(m[0] &* lr &+ m[1] &* lg &+ m[2] &* lb)
                        let greenOut = sRGB(m[3] &* lr &+ m[4] &* lg &+ m[5] &* lb)
                        let blue = sRGB(m[6] &* lr &+ m[7] &* lg &+ m[8] &* lb)
                        // BT.601, full range, in 16-bit fixed point.
                        y[x] = UInt8(truncatingIfNeeded: (19595 &* red &+ 38470 &* greenOut &+ 7471 &* blue &+ 32768) &>> 16)
                        cb[x] = UInt8(truncatingIfNeeded: byte(
                            ((-11059 &* red &- 21709 &* greenOut &+ 32768 &* blue &+ 32768) &>> 16) &+ 128))
                        cr[x] = UInt8(truncatingIfNeeded: byte(
                            ((32768 &* red &- 27439 &* greenOut &- 5329 &* blue &+ 32768) &>> 16) &+ 128))
                    }
                }
            }
        }
    }

    /// The inverse of a 3x3 matrix; nil when it is singular.
    private static func inverse(_ a: [[Double]]) -> [[Double]]? {
        let c00 = a[1][1] * a[2][2] - a[1][2] * a[2][1], c01 = a[1][2] * a[2][0] - a[1][0] * a[2][2]
        let c02 = a[1][0] * a[2][1] - a[1][1] * a[2][0]
        let determinant = a[0][0] * c00 + a[0][1] * c01 + a[0][2] * c02
        guard abs(determinant) > 1e-12 else { return nil }
        let cofactors = [
            [c00, a[0][2] * a[2][1] - a[0][1] * a[2][2], a[0][1] * a[1][2] - a[0][2] * a[1][1]],
            [c01, a[0][0] * a[2][2] - a[0][2] * a[2][0], a[0][2] * a[1][0] - a[0][0] * a[1][2]],
            [c02, a[0][1] * a[2][0] - a[0][0] * a[2][1], a[0][0] * a[1][1] - a[0][1] * a[1][0]],
        ]
        return cofactors.map { $0.map { $0 / determinant } }
    }
}
