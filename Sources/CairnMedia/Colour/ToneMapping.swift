import CFFmpeg
import Foundation

/// HDR video (PQ or HLG, BT.2020) shown on an SDR derivative: to linear light, to BT.709 primaries, highlights
/// rolled off above reference white (203 cd/m², BT.2408) so they are neither clipped nor washed out, then sRGB.
/// Pure arithmetic on a small frame: it runs after scaling.
enum ToneMapping {
    enum Transfer { case pq, hlg }

    static func transfer(of frame: Frame) -> Transfer? {
        switch frame.pointer.pointee.color_trc {
        case AVCOL_TRC_SMPTE2084: return .pq
        case AVCOL_TRC_ARIB_STD_B67: return .hlg
        default: return nil
        }
    }

    /// Display light in cd/m² for a non-linear signal 0...1.
    static func nits(_ signal: Double, _ transfer: Transfer) -> Double {
        switch transfer {
        case .pq:
            let m1 = 0.1593017578125, m2 = 78.84375, c1 = 0.8359375, c2 = 18.8515625, c3 = 18.6875
            let p = pow(max(signal, 0), 1 / m2)
            return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
        case .hlg:
            let a = 0.17883277, b = 0.28466892, c = 0.55991073
            let scene = signal <= 0.5 ? signal * signal / 3 : (exp((signal - c) / a) + b) / 12
            // A 1000 cd/m² display with the system gamma of 1.2, per channel.
            return 1000 * pow(max(scene, 0), 1.2)
        }
    }

    /// Linear SDR 0...1 from cd/m²: reference white at 0.8, highlights compressed towards 1 (peak 1000 cd/m²).
    static func rollOff(_ nits: Double) -> Double {
        let x = nits / 203
        let knee = 0.8
        if x * knee <= knee { return x * knee }
        let peak = 1000.0 / 203
        let over = (x - 1) / (peak - 1)  // 0 at reference white, 1 at peak
        return knee + (1 - knee) * (1 - exp(-3 * max(over, 0))) / (1 - exp(-3))
    }

    static func sRGB(_ linear: Double) -> Double {
        let v = min(max(linear, 0), 1)
        return v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055
    }

    /// `source` (RGB48LE, BT.2020 primaries, `transfer` signal) into `destination` (RGB24, sRGB), same size.
    static func map(_ source: Frame, into destination: Frame, transfer: Transfer) {
        guard let from = source.plane(0), let to = destination.plane(0) else { return }
        // Signal codes 0...65535 to output bytes, through a table per channel value (only luminance-free math).
        var table = [Double](repeating: 0, count: 1024)
        for index in 0..<1024 { table[index] = rollOff(nits(Double(index) / 1023, transfer)) }
        for y in 0..<source.height {
            let line = UnsafeRawPointer(from + y * source.linesize(0)).assumingMemoryBound(to: UInt16.self)
            let out = to + y * destination.linesize(0)
            for x in 0..<source.width {
                let r = table[Int(UInt16(littleEndian: line[x * 3])) >> 6]
                let g = table[Int(UInt16(littleEndian: line[x * 3 + 1])) >> 6]
                let b = table[Int(UInt16(littleEndian: line[x * 3 + 2])) >> 6]
                // BT.2020 to BT.709 primaries, in linear light.
                let r709 = 1.6605 * r - 0.5876 * g - 0.0728 * b
                let g709 = -0.1246 * r + 1.1329 * g - 0.0083 * b
                let b709 = -0.0182 * r - 0.1006 * g + 1.1187 * b
                out[x * 3] = UInt8((sRGB(r709) * 255).rounded())
                out[x * 3 + 1] = UInt8((sRGB(g709) * 255).rounded())
                out[x * 3 + 2] = UInt8((sRGB(b709) * 255).rounded())
            }
        }
    }
}
