import Foundation

/// Small valid JPEGs of distinct content at little cost: one tiny picture made once with `ffmpeg`, and per
/// call comment (COM) segments of seeded filler after its start marker. Every copy decodes to the same
/// picture, but each (byteCount, seed) has its own bytes, so its own SHA1: for tests about copying,
/// deduplication and caching that need files the media lanes accept.
public enum DistinctJPEG {
    private static let template = Result { () throws -> Data in
        let folder = try TemporaryDirectory(prefix: "cairn-jpeg-template")
        let path = folder.subpath("template.jpg")
        try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "gradients=s=64x48:seed=3", "-frames:v", "1", "-q:v", "5", path])
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// A JPEG of at least `byteCount` bytes (exactly, when `byteCount` leaves room for the picture and a segment).
    public static func data(byteCount: Int, seed: UInt8) throws -> Data {
        let picture = try template.get()
        var filler = max(4 + 1, byteCount - picture.count)
        var result = Data(picture.prefix(2))  // SOI
        var position = 0
        while filler > 0 {
            // A segment holds at most 65,533 payload bytes; never leave a remainder too small for a header.
            var payload = min(filler - 4, 65_533)
            if (1..<5).contains(filler - (payload + 4)) { payload -= 5 }
            result.append(contentsOf: [0xFF, 0xFE, UInt8((payload + 2) >> 8), UInt8((payload + 2) & 0xFF)])
            result.append(contentsOf: (0..<payload).map { UInt8(truncatingIfNeeded: ($0 + position) &* 31 &+ Int(seed)) })
            position += payload
            filler -= payload + 4
        }
        result.append(picture.dropFirst(2))
        return result
    }
}
