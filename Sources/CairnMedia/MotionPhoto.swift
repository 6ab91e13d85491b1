import Foundation

/// The movie a Samsung or Google "motion photo" carries inside its still: found, never decoded here.
///
/// Samsung appends `MotionPhoto_Data` and an MP4 after the JPEG (or an `mpvd` box in HEIC); Google's XMP names
/// the movie's length from the end of the file (`GCamera:MicroVideoOffset`, or a `Container:Directory` item with
/// `Item:Semantic="MotionPhoto"` and `Item:Length`). Either way the movie is a whole MP4 of its own.
public enum MotionPhoto {
    /// The byte range of the embedded MP4 in `bytes`, or nil when there is none (checked: it starts with `ftyp`).
    static func embeddedVideo(in bytes: [UInt8]) -> Range<Int>? {
        func isMP4(at start: Int) -> Bool {
            start >= 0 && start + 12 <= bytes.count && Array(bytes[(start + 4)..<(start + 8)]) == Array("ftyp".utf8)
        }
        let marker = Array("MotionPhoto_Data".utf8)
        if let found = bytes.lastRange(of: marker), isMP4(at: found.upperBound) {
            return found.upperBound..<bytes.count
        }
        // HEIC from Samsung: a top-level `mpvd` box holding the MP4 (looked for in ISO-BMFF files only).
        let isBMFF = bytes.count >= 12 && Array(bytes[4..<8]) == Array("ftyp".utf8)
        if isBMFF, let found = bytes.lastRange(of: Array("mpvd".utf8)), isMP4(at: found.upperBound) {
            let start = found.lowerBound - 4
            let size = start >= 0 ? Int(bytes[start]) << 24 | Int(bytes[start + 1]) << 16 | Int(bytes[start + 2]) << 8 | Int(bytes[start + 3]) : 0
            let end = size > 8 && start + size <= bytes.count ? start + size : bytes.count
            return found.upperBound..<end
        }
        // Google: the XMP packet says how many bytes at the end are the movie. Text is decoded and searched only
        // when the header names a motion photo at all (most stills do not).
        let head = Array(bytes.prefix(256 << 10))
        guard head.firstRange(of: Array("MicroVideo".utf8)) != nil || head.firstRange(of: Array("MotionPhoto".utf8)) != nil
        else { return nil }
        let xmp = String(decoding: head, as: UTF8.self)
        for pattern in [#"MicroVideoOffset="(\d+)""#, #"Semantic="MotionPhoto"[^>]*?Length="(\d+)""#] {
            if let match = xmp.range(of: pattern, options: .regularExpression) {
                let digits = xmp[match].split(separator: "\"").dropFirst().first { $0.allSatisfy(\.isNumber) && !$0.isEmpty }
                if let length = digits.flatMap({ Int($0) }), length > 0, length < bytes.count,
                   isMP4(at: bytes.count - length) {
                    return (bytes.count - length)..<bytes.count
                }
            }
        }
        return nil
    }

    /// Writes the embedded movie of the still at `path` to `destination` byte for byte (the MP4 as the camera
    /// made it: no re-encode) and returns its size, or nil when the still has none.
    public static func extract(from path: String, to destination: String) throws(MediaError) -> Int? {
        let call = FFmpegCall(file: path)
        guard let bytes = try contents(of: path, call: call), let range = embeddedVideo(in: bytes) else { return nil }
        try FileIO.write(Array(bytes[range]), to: destination, call: call)
        return range.count
    }

    /// Where in the still at `path` its embedded movie lies, or nil when it has none.
    public static func embeddedVideoRange(ofFileAt path: String) throws(MediaError) -> Range<Int>? {
        try contents(of: path, call: FFmpegCall(file: path)).flatMap(embeddedVideo(in:))
    }

    /// The whole file, or nil when it is empty or too big to be a phone's still.
    private static func contents(of path: String, call: FFmpegCall) throws(MediaError) -> [UInt8]? {
        let size = try FileIO.size(of: path, call: call)
        guard size > 0, size <= 512 << 20 else { return nil }
        return try FileIO.prefix(path, limit: size, call: call)
    }
}

extension Array where Element == UInt8 {
    /// The last occurrence of `pattern`.
    func lastRange(of pattern: [UInt8]) -> Range<Int>? {
        guard !pattern.isEmpty, pattern.count <= count else { return nil }
        var index = count - pattern.count
        while index >= 0 {
            if self[index] == pattern[0], Array(self[index..<(index + pattern.count)]) == pattern {
                return index..<(index + pattern.count)
            }
            index -= 1
        }
        return nil
    }
}
