import CairnCore
import Glibc

/// An archive split in parts, as Google Takeout splits an export (`takeout-20261128T153000Z-001.zip`, `-002.zip`,
/// …): walked as one folder named without the part number (`takeout-20261128T153000Z.zip`), so that a photo in one
/// part and its JSON in another sit side by side, as they did before the split.
public enum ArchiveParts {
    /// The folder a part is walked in (`NAME-001.zip` → `NAME.zip`); nil for a name that is not a part.
    public static func folderName(of name: String) -> String? {
        let lower = name.lowercased()
        guard let suffix = SourceArchive.suffixes.first(where: { lower.hasSuffix($0) }) else { return nil }
        let stem = name.utf8.dropLast(suffix.utf8.count)
        let digits = stem.suffix(3)
        guard stem.count > 4, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              stem.dropLast(3).last == UInt8(ascii: "-") else { return nil }
        return String(decoding: stem.dropLast(4), as: UTF8.self) + String(name.suffix(suffix.count))
    }

    /// The parts in `folder` (an absolute path) that are walked as `name`, sorted; empty when there are none. Each
    /// entry read of a split archive asks: the folder is listed again only once it changed (its stat facts).
    public static func parts(named name: String, in folder: String) -> [String] {
        var info = stat()
        guard stat(folder, &info) == 0 else { return [] }
        let facts = FileFingerprint(info)
        if let known = listed.withLock({ $0[folder] }), known.facts == facts { return known.parts[name] ?? [] }
        let byName = Dictionary(grouping: listParts(in: folder), by: { folderName(of: $0) ?? "" })
        listed.withLock { listed in
            if listed.count >= 64 { listed.removeAll() }
            listed[folder] = (facts, byName)
        }
        return byName[name] ?? []
    }

    /// The folders whose parts were last listed, with their stat facts then.
    private static let listed = Locked<[String: (facts: FileFingerprint, parts: [String: [String]])]>([:])

    /// Every part in `folder`, sorted.
    private static func listParts(in folder: String) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var found: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if folderName(of: entryName) != nil { found.append(entryName) }
        }
        return found.sorted { PathOrder.precedes($0, $1) }
    }
}

/// What each archive holds, as this process last found it, kept while the archive is unchanged (its stat facts):
/// a zip's entries with their offsets, so that each is read where it starts, and the names of any archive, so that
/// a path into a split archive finds the part holding it. At most `capacity` archives are kept.
final class ArchiveIndexes: Sendable {
    static let shared = ArchiveIndexes()
    static let capacity = 64

    struct Index: Sendable {
        var names: Set<String>
        /// A zip's entries by their checked name; nil for a tar, or a zip without a readable central directory.
        var zipEntries: [String: ZipDirectory.Entry]?
    }

    private struct Key: Hashable {
        var path: String
        var fingerprint: FileFingerprint
    }

    private let indexes = Locked<(byKey: [Key: Index], order: [Key])>(([:], []))

    /// The index of the archive at `path`, made now if it changed or was never made; nil if it is no file.
    func index(of path: String) -> Index? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let key = Key(path: path, fingerprint: FileFingerprint(info))
        if let known = indexes.withLock({ $0.byKey[key] }) { return known }
        let (listing, zip) = SourceArchive.listWithOffsets(path)
        let index = Index(names: Set(listing.entries.map(\.name)), zipEntries: zip)
        indexes.withLock { cache in
            cache.order.removeAll { $0.path == path }
            cache.byKey = cache.byKey.filter { $0.key.path != path }
            cache.byKey[key] = index
            cache.order.append(key)
            if cache.order.count > Self.capacity { cache.byKey[cache.order.removeFirst()] = nil }
        }
        return index
    }

    /// Whether the archive at `path` holds entry `entry`.
    func holds(_ path: String, entry: String) -> Bool { index(of: path)?.names.contains(entry) ?? false }
}
