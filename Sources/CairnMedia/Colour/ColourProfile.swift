import CLCMS2

// lcms2 calls live here and nowhere else. Profiles and transforms are owned by final classes that free them.

/// An ICC profile read from a file's bytes (a JPEG's APP2 chunks, a HEIF `colr` box).
final class ColourProfile {
    let pointer: cmsHPROFILE
    /// The profile's bytes, kept so a transform can be made from the same profile more than once.
    let bytes: [UInt8]

    /// Nil when lcms2 cannot parse the bytes: the picture is then shown as if it were sRGB.
    init?(bytes: [UInt8]) {
        guard !bytes.isEmpty,
              let handle = bytes.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) })
        else { return nil }
        pointer = handle
        self.bytes = bytes
    }

    private init(sRGB handle: cmsHPROFILE) {
        pointer = handle
        bytes = []
    }

    deinit { cmsCloseProfile(pointer) }

    /// lcms2's own sRGB profile, the target of every conversion.
    static func sRGB() -> ColourProfile? { cmsCreate_sRGBProfile().map { ColourProfile(sRGB: $0) } }

    var isRGB: Bool { cmsGetColorSpace(pointer) == cmsSigRgbData }
    var isCMYK: Bool { cmsGetColorSpace(pointer) == cmsSigCmykData }

    /// The profile's own description ("Display P3", "Adobe RGB (1998)", "sRGB IEC61966-2.1").
    var name: String {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = cmsGetProfileInfoASCII(pointer, cmsInfoDescription, "en", "US", &buffer, UInt32(buffer.count))
        guard count > 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An RGB profile that already is sRGB (by its description) needs no conversion: skip the work.
    var isSRGB: Bool { isRGB && name.lowercased().contains("srgb") }

    /// What a matrix-shaper RGB profile (three tone curves and three colorants: Display P3, Adobe RGB, the
    /// profiles phones and cameras embed) holds, as numbers; nil for any other kind (LUT-based, CMYK, grey), and for
    /// one that also has a LUT from device to PCS, which lcms2 would use instead of its curves and colorants.
    var matrixShaper: MatrixShaper? {
        let lookupTables = [cmsSigAToB0Tag, cmsSigAToB1Tag, cmsSigAToB2Tag, cmsSigDToB0Tag, cmsSigDToB1Tag, cmsSigDToB2Tag]
        guard isRGB, cmsIsMatrixShaper(pointer) != 0, !lookupTables.contains(where: { cmsIsTag(pointer, $0) != 0 })
        else { return nil }
        var colorants: [Double] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let xyz = cmsReadTag(pointer, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self).pointee else { return nil }
            colorants += [xyz.X, xyz.Y, xyz.Z]
        }
        var curves: [[Double]] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(pointer, tag) else { return nil }
            let tone = OpaquePointer(curve)
            curves.append((0...255).map { Double(cmsEvalToneCurveFloat(tone, Float($0) / 255)) })
        }
        // Columns of the RGB-to-XYZ matrix, one per channel, as the tags store them.
        let matrix = (0..<3).map { row in (0..<3).map { column in colorants[column * 3 + row] } }
        return MatrixShaper(toXYZ: matrix, linear: curves)
    }

    /// sRGB's tone curve inverted: the 8-bit code of each linear value `i / (count - 1)`.
    static func sRGBEncoding(count: Int) -> [UInt8]? {
        guard let sRGB = sRGB(), let curve = cmsReadTag(sRGB.pointer, cmsSigRedTRCTag),
              let inverse = cmsReverseToneCurve(OpaquePointer(curve))
        else { return nil }
        defer { cmsFreeToneCurve(inverse) }
        return (0..<count).map { index in
            let code = Double(cmsEvalToneCurveFloat(inverse, Float(index) / Float(count - 1))) * 255
            return UInt8(min(255, max(0, code.rounded())))
        }
    }
}

/// A matrix-shaper profile as numbers: the matrix from its linear RGB to the profile connection space (XYZ, D50),
/// and each channel's linear value at every 8-bit code.
struct MatrixShaper {
    var toXYZ: [[Double]]
    var linear: [[Double]]
}

/// A conversion from a file's profile to sRGB, 8 bits per sample, relative colorimetric as libvips does.
final class ColourTransform {
    private let pointer: cmsHTRANSFORM
    let inputBytesPerPixel: Int
    let outputBytesPerPixel: Int

    enum Layout {
        case rgb, rgba, cmyk, cmykInverted
        var lcmsType: UInt32 {
            switch self {
            case .rgb: return CLCMS2_TYPE_RGB_8()
            case .rgba: return CLCMS2_TYPE_RGBA_8()
            case .cmyk: return CLCMS2_TYPE_CMYK_8()
            case .cmykInverted: return CLCMS2_TYPE_CMYK_8_REV()
            }
        }
        var bytesPerPixel: Int { self == .rgb ? 3 : 4 }
    }

    /// Nil when lcms2 cannot build the transform (a profile of the wrong class, a broken LUT).
    init?(from profile: ColourProfile, input: Layout, output: Layout) {
        guard let target = ColourProfile.sRGB() else { return nil }
        let flags = output == .rgba && input == .rgba ? CLCMS2_FLAGS_COPY_ALPHA() : 0
        guard let handle = cmsCreateTransform(profile.pointer, input.lcmsType, target.pointer, output.lcmsType,
                                              CLCMS2_INTENT_RELATIVE_COLORIMETRIC(), flags)
        else { return nil }
        pointer = handle
        inputBytesPerPixel = input.bytesPerPixel
        outputBytesPerPixel = output.bytesPerPixel
    }

    deinit { cmsDeleteTransform(pointer) }

    /// Converts `height` rows of `width` pixels; rows may be padded (strides in bytes).
    func apply(_ source: UnsafeRawPointer, stride sourceStride: Int, into destination: UnsafeMutableRawPointer,
               stride destinationStride: Int, width: Int, height: Int) {
        cmsDoTransformLineStride(pointer, source, destination, UInt32(width), UInt32(height),
                                 UInt32(sourceStride), UInt32(destinationStride), 0, 0)
    }
}
