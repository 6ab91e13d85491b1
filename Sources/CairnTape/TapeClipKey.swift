import CairnCore

/// What a clip of a tape is made from.
public enum TapeClipKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A photo, shown as a short clip (the library's synthesized clip when there is one).
    case still
    case video
    /// A Live Photo's paired motion video.
    case livePhotoMotion
    /// The video embedded in a motion photo.
    case motionPhotoVideo
}

/// How much of its source a clip shows: a video is cut after `maxSeconds`, a still lasts that long.
public struct TapeClipTrim: Sendable, Hashable, Codable {
    public let maxSeconds: Double
    /// A slow pan and zoom over a still; nothing else has it.
    public let kenBurns: Bool

    public init(maxSeconds: Double, kenBurns: Bool = false) {
        precondition(maxSeconds.isFinite && maxSeconds > 0, "a clip lasts a positive time")
        self.maxSeconds = maxSeconds
        self.kenBurns = kenBurns
    }
}

/// Names a clip's encoded segments by what they are made of (the source's content, how it is shown, the tape
/// format), never by a tape or a position in one: a clip made for one tape is found again by every rebuild,
/// reordering and other tape that shows the same content the same way.
///
/// A caller that passes a video's effective trim (the shorter of its duration and the maximum) keeps the clip's
/// key when only the maximum changes and the video was shorter anyway.
public struct TapeClipKey: Sendable, Hashable {
    /// 40 lowercase hex digits.
    public let contentSHA1: String
    public let kind: TapeClipKind
    public let trim: TapeClipTrim
    public let formatIdentity: String

    /// `contentSHA1` comes from cairn's own hashing; anything but 40 hex digits is a programmer error.
    public init(contentSHA1: String, kind: TapeClipKind, trim: TapeClipTrim, format: TapeFormat = .standard) {
        let sha1 = contentSHA1.lowercased()
        precondition(sha1.utf8.count == 40 && sha1.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) },
                     "a content SHA1 is 40 hex digits: \(contentSHA1)")
        self.contentSHA1 = sha1
        self.kind = kind
        self.trim = trim
        self.formatIdentity = format.identity
    }

    /// Ken Burns counts only for a still: a video shows the same whether or not it was asked for.
    var kenBurnsApplies: Bool { kind == .still && trim.kenBurns }

    /// The text the folder name digests: every field, the trim in whole milliseconds so that it prints the same
    /// everywhere.
    public var canonicalText: String {
        let trimMilliseconds = Int((trim.maxSeconds * 1000).rounded())
        return "tape-clip-v1|\(contentSHA1)|\(kind.rawValue)|max\(trimMilliseconds)ms|kenburns\(kenBurnsApplies ? 1 : 0)|\(formatIdentity)"
    }

    /// 16 hex digits of FNV-1a 64 over `canonicalText`'s UTF-8: the same on every run and platform, unlike
    /// `Hasher`, which is seeded per process.
    public var folderName: String { FNV1a64.hex(of: canonicalText) }
}

/// The files of one clip's folder: its fMP4 init segment and its media segments, numbered from 0.
public enum TapeClipFiles {
    public static let initSegment = "init.mp4"

    /// "seg-00000.m4s", "seg-00001.m4s", ...
    public static func segment(_ index: Int) -> String {
        precondition(index >= 0, "segments are numbered from 0")
        return "seg-\(zeroPadded(index, width: 5)).m4s"
    }

    static func zeroPadded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
