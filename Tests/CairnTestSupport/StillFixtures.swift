import Foundation

/// Stills in the formats phones and cameras write, made at test time with the tools of the formats'
/// own libraries (`heif-enc` from libheif, `vips` from libvips, `ffmpeg` with libwebp), never committed.
public enum StillFixtures {
    /// A real file committed under `Tests/Fixtures/stills` (see its SOURCES.md).
    public static func committed(_ name: String, file: String = #filePath) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/stills/\(name)").path
    }

    /// A HEIC (HEVC) or, with `avif`, an AVIF (AV1) encoded by libheif from `jpeg`, keeping its EXIF block.
    @discardableResult
    public static func heif(from jpeg: String, at path: String, avif: Bool = false, bitDepth: Int? = nil) throws -> String {
        var arguments = ["heif-enc", "-q", "90", jpeg, "-o", path]
        if avif { arguments.insert("-A", at: 1) }
        if let bitDepth { arguments.insert(contentsOf: ["-b", String(bitDepth)], at: 1) }
        try ExternalTool.run(arguments)
        return path
    }

    /// `jpeg` converted to CMYK by libvips with its built-in CMYK profile; the profile is embedded
    /// unless `stripProfile`, and libjpeg writes the Adobe marker (inverted samples) either way.
    @discardableResult
    public static func cmykJPEG(from jpeg: String, at path: String, stripProfile: Bool = false) throws -> String {
        try ExternalTool.run(["vips", "icc_export", jpeg, stripProfile ? path + "[strip]" : path, "--output-profile", "cmyk"])
        return path
    }

    /// What libvips makes of `source` as an sRGB thumbnail whose long side is `longSide`, as a PNG at `path`.
    @discardableResult
    public static func vipsReference(of source: String, longSide: Int, at path: String) throws -> String {
        try ExternalTool.run(["vipsthumbnail", source, "--size", "\(longSide)x\(longSide)", "--export-profile", "srgb",
                              "-o", path])
        return path
    }

    /// An animated WebP of two frames (libwebp through FFmpeg): red for 0.1 s, then blue.
    @discardableResult
    public static func animatedWebP(at path: String) throws -> String {
        try ExternalTool.ffmpeg([
            "-f", "lavfi", "-i", "color=c=red:s=320x240:r=10:d=0.1", "-f", "lavfi",
            "-i", "color=c=blue:s=320x240:r=10:d=0.3",
            "-filter_complex", "[0][1]concat=n=2:v=1", "-c:v", "libwebp_anim", "-loop", "0", path,
        ])
        return path
    }

    /// The first `fraction` of a file, as a copy cut short in transfer would be.
    @discardableResult
    public static func truncated(_ source: String, at path: String, fraction: Double = 0.5) throws -> String {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Mean absolute difference per RGB sample between two pictures, both scaled to 32x32 by FFmpeg.
    public static func meanDifference(_ a: String, _ b: String) throws -> Double {
        func small(_ path: String) throws -> [UInt8] {
            [UInt8](try ExternalTool.run(["ffmpeg", "-v", "error", "-i", path, "-vf", "scale=32:32:flags=area",
                                          "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]))
        }
        let x = try small(a), y = try small(b)
        guard x.count == y.count, !x.isEmpty else { return .infinity }
        return Double(zip(x, y).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(x.count)
    }
}
