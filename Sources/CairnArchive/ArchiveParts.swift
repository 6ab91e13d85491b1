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

    /// The parts in `folder` (an absolute path) that are walked as `name`, sorted; empty when there are none.
    public static func parts(named name: String, in folder: String) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var found: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if folderName(of: entryName) == name { found.append(entryName) }
        }
        return found.sorted { PathOrder.precedes($0, $1) }
    }
}

/// What each archive holds, listed once per process and kept while the archive is unchanged (its stat facts): a
/// path into a split archive is resolved to the part holding the entry without listing the parts again.
final class ListingCache: Sendable {
    static let shared = ListingCache()

    private struct Key: Hashable {
        var path: String
        var fingerprint: FileFingerprint
    }

    private let names = Locked<[Key: Set<String>]>([:])

    /// Whether the archive at `path` holds entry `entry` (listed now if it changed or was never listed).
    func holds(_ path: String, entry: String) -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        let key = Key(path: path, fingerprint: FileFingerprint(info))
        if let known = names.withLock({ $0[key] }) { return known.contains(entry) }
        let listed = Set(SourceArchive.list(path).entries.map(\.name))
        names.withLock { cache in
            cache = cache.filter { $0.key.path != path }
            cache[key] = listed
        }
        return listed.contains(entry)
    }
}
