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

    /// A motion photo as Samsung writes it (`samsung`: the JPEG, `MotionPhoto_Data`, then the MP4) or as Google
    /// does (`google`: an XMP packet with `GCamera:MicroVideoOffset`, the MP4 appended); returns the MP4's bytes.
    @discardableResult
    public static func motionPhoto(at path: String, still: String, movie: String, google: Bool) throws -> Data {
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: still))
        let mp4 = try Data(contentsOf: URL(fileURLWithPath: movie))
        var out = Data()
        if google {
            let xmp = #"<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">"#
                + #"<rdf:Description xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" GCamera:MicroVideo="1" "#
                + #"GCamera:MicroVideoVersion="1" GCamera:MicroVideoOffset="\#(mp4.count)"/></rdf:RDF></x:xmpmeta>"#
            let payload = Data("http://ns.adobe.com/xap/1.0/".utf8) + Data([0]) + Data(xmp.utf8)
            let length = payload.count + 2
            out = jpeg.prefix(2) + Data([0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)]) + payload + jpeg.dropFirst(2)
        } else {
            out = jpeg + Data("MotionPhoto_Data".utf8)
        }
        try (out + mp4).write(to: URL(fileURLWithPath: path))
        return mp4
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
