import CairnTesting
import CFFmpeg
import CLCMS2
import Foundation
import Testing
@testable import CairnMedia

/// The profile's colours converted to sRGB on YCbCr planes must agree with lcms2's own transform on RGB, the route
/// every other profile takes (and the one this pass replaced for matrix-shaper profiles).
@Suite("YCbCr colour conversion")
struct YCbCrColourConversionTests {
    /// Samples of the whole YCbCr cube (16 levels a component), converted both ways.
    @Test func aDisplayP3PicturesYCbCrConvertsAsLcms2DoesOnRGB() throws {
        let picture = try PictureDecoder(configuration: MediaConfiguration())
            .decodeStill(path: StillFixtures.committed("iphone-display-p3.jpg"), targetShortSide: 50)
        let profile = try #require(picture.profile)
        #expect(profile.name == "Display P3")
        let conversion = try #require(picture.yCbCrConversion())
        let transform = try #require(picture.colourTransform(.rgb))

        let levels = (0..<16).map { $0 * 17 }
        let samples = levels.flatMap { y in levels.flatMap { cb in levels.map { cr in (y, cb, cr) } } }
        let call = FFmpegCall(file: "samples")
        let frame = try Frame(width: 64, height: samples.count / 64, format: AV_PIX_FMT_YUVJ444P, call: call)
        for (index, sample) in samples.enumerated() {
            let (x, y) = (index % 64, index / 64)
            frame.plane(0)![y * frame.linesize(0) + x] = UInt8(sample.0)
            frame.plane(1)![y * frame.linesize(1) + x] = UInt8(sample.1)
            frame.plane(2)![y * frame.linesize(2) + x] = UInt8(sample.2)
        }
        conversion.apply(to: frame, source: .init(AVCOL_SPC_UNSPECIFIED))

        // The RGB route: BT.601 full range to RGB, lcms2's transform, back to YCbCr, each in floating point.
        func byte(_ value: Double) -> UInt8 { UInt8(min(255, max(0, value.rounded()))) }
        var rgb = samples.flatMap { sample -> [UInt8] in
            let (y, cb, cr) = (Double(sample.0), Double(sample.1) - 128, Double(sample.2) - 128)
            return [byte(y + 1.402 * cr), byte(y - 0.344136 * cb - 0.714136 * cr), byte(y + 1.772 * cb)]
        }
        var converted = [UInt8](repeating: 0, count: rgb.count)
        rgb.withUnsafeMutableBytes { from in
            converted.withUnsafeMutableBytes { to in
                transform.apply(from.baseAddress!, stride: from.count, into: to.baseAddress!, stride: to.count,
                                width: samples.count, height: 1)
            }
        }
        var worst = 0, total = 0, changed = 0
        for index in samples.indices {
            let (r, g, b) = (Double(converted[index * 3]), Double(converted[index * 3 + 1]), Double(converted[index * 3 + 2]))
            let expected = [byte(0.299 * r + 0.587 * g + 0.114 * b),
                            byte(-0.168736 * r - 0.331264 * g + 0.5 * b + 128),
                            byte(0.5 * r - 0.418688 * g - 0.081312 * b + 128)]
            let (x, y) = (index % 64, index / 64)
            let actual = (0..<3).map { frame.plane($0)![y * frame.linesize($0) + x] }
            for plane in 0..<3 {
                let difference = abs(Int(actual[plane]) - Int(expected[plane]))
                worst = max(worst, difference)
                total += difference
            }
            let original = [samples[index].0, samples[index].1, samples[index].2]
            if (0..<3).contains(where: { abs(Int(actual[$0]) - original[$0]) > 3 }) { changed += 1 }
        }
        let mean = Double(total) / Double(samples.count * 3)
        #expect(worst <= 1, "largest difference from lcms2's RGB route: \(worst)")
        #expect(mean < 0.01, "mean difference from lcms2's RGB route: \(mean)")
        // Display P3 is wider than sRGB: saturated samples move (a conversion that did nothing would fail here).
        #expect(changed > samples.count / 10, "\(changed) of \(samples.count) samples changed")
    }

    /// sRGB's own profile is a matrix-shaper too: converted to itself, a grey ramp stays where it was.
    @Test func sRGBsOwnProfileLeavesAGreyRampInPlace() throws {
        let sRGB = try #require(ColourProfile.sRGB()?.matrixShaper)
        let conversion = try #require(YCbCrColourConversion(sRGB))
        let frame = try Frame(width: 256, height: 1, format: AV_PIX_FMT_YUVJ444P, call: FFmpegCall(file: "grey"))
        for x in 0..<256 {
            frame.plane(0)![x] = UInt8(x)
            frame.plane(1)![x] = 128
            frame.plane(2)![x] = 128
        }
        conversion.apply(to: frame, source: .init(AVCOL_SPC_UNSPECIFIED))
        let moved = (0..<256).filter { x in
            abs(Int(frame.plane(0)![x]) - x) > 1 || (1...2).contains { abs(Int(frame.plane($0)![x]) - 128) > 1 }
        }
        #expect(moved.isEmpty, "grey levels moved: \(moved.prefix(8))")
    }

    /// A profile with curves and colorants and also a LUT to the PCS is converted by lcms2 through its LUT: such a
    /// profile keeps the lcms2 transform, whose answer the YCbCr pass would not give.
    @Test func aProfileWithALookupTableBesideItsCurvesKeepsTheLcms2Transform() throws {
        func bytes(withLookupTable: Bool) throws -> [UInt8] {
            let profile = try #require(cmsCreate_sRGBProfile())
            defer { cmsCloseProfile(profile) }
            if withLookupTable {
                let pipeline = try #require(cmsPipelineAlloc(nil, 3, 3))
                defer { cmsPipelineFree(pipeline) }
                #expect(cmsWriteTag(profile, cmsSigAToB0Tag, UnsafeRawPointer(pipeline)) != 0)
            }
            var count: UInt32 = 0
            #expect(cmsSaveProfileToMem(profile, nil, &count) != 0)
            var data = [UInt8](repeating: 0, count: Int(count))
            #expect(cmsSaveProfileToMem(profile, &data, &count) != 0)
            return data
        }
        let plain = try #require(ColourProfile(bytes: try bytes(withLookupTable: false)))
        let withTable = try #require(ColourProfile(bytes: try bytes(withLookupTable: true)))
        #expect(plain.matrixShaper != nil)
        #expect(withTable.isRGB && withTable.matrixShaper == nil)
    }
}
