import Foundation

/// Patches, in a copy in memory, what libheif 1.15 refuses a whole HEIF file for and later libheif reads past:
/// - an auxiliary image that refers to several images (iPhones' depth maps, HDR gain maps and mattes): the
///   reference is renamed to a type libheif ignores, so the primary image comes out without that auxiliary image;
/// - items whose data run past the end of the file (a copy cut short): when the primary image's own data are all
///   there, the missing tail is filled with zeros, so the primary decodes and the cut items are never read.
/// Nothing is patched when neither applies: libheif's refusal then stands as the reason.
enum HEIFRecovery {
    /// Files larger than this are not copied into memory to be patched.
    static let maxFileBytes = 512 << 20
    /// The most zeros a cut file is padded with.
    static let maxPadBytes = 64 << 20
    /// The type a refused auxiliary reference is renamed to: not one libheif reads.
    static let ignoredReferenceType = Array("xaux".utf8)

    /// The file's bytes, patched, or nil when nothing applies. `boxes` is the file's `meta` as cairn read it.
    static func patchedFile(path: String, boxes: HEIFBoxes?, call: FFmpegCall) -> [UInt8]? {
        guard let boxes, let size = try? FileIO.size(of: path, call: call), size <= maxFileBytes,
              var bytes = try? FileIO.prefix(path, limit: size, call: call) else { return nil }
        var patched = false
        for reference in boxes.references where reference.type == "auxl" && reference.to.count != 1
            && reference.typeOffset + 4 <= bytes.count {
            bytes.replaceSubrange(reference.typeOffset..<reference.typeOffset + 4, with: ignoredReferenceType)
            patched = true
        }
        let end = boxes.extents.map(\.range.upperBound).max() ?? 0
        if end > bytes.count, end - bytes.count <= maxPadBytes, let primary = boxes.primaryID {
            let needed = boxes.dataItems(of: primary)
            let primaryEnd = boxes.extents.filter { needed.contains($0.item) }.map(\.range.upperBound).max() ?? Int.max
            if primaryEnd <= bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: end - bytes.count))
                patched = true
            }
        }
        return patched ? bytes : nil
    }
}
