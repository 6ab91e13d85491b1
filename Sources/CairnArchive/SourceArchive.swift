import CArchive
import CairnCore
import Glibc
import SystemPackage

/// Archives in a source read in place (`--archives read`): which files are archives, what they hold, an entry's
/// bytes. An entry is named by the archive's path and its own, as `<archive>/<entry>`: the walk lists it there, and
/// whoever reads it later splits the path again (`split`).
public enum SourceArchive {
    /// Name endings read as archives, compared without case.
    static let suffixes = [".zip", ".tar", ".tgz", ".tar.gz"]

    public static func isArchive(name: String) -> Bool {
        let lower = name.lowercased()
        return suffixes.contains { lower.hasSuffix($0) && lower.count > $0.count }
    }

    /// The archive and entry a path goes through, when a folder of it is an archive file (`/a/b.zip/c/d.jpg`:
    /// `/a/b.zip` and `c/d.jpg`); nil for a path of an ordinary file. Links are never followed to the archive.
    public static func split(_ path: String) -> (archive: String, entry: String)? {
        guard !path.isEmpty else { return nil }
        var end = path.startIndex
        while let slash = path[path.index(after: end)...].firstIndex(of: "/") {
            let prefix = String(path[..<slash])
            end = slash
            let name = prefix.split(separator: "/").last.map(String.init) ?? ""
            guard isArchive(name: name) else { continue }
            let entry = String(path[path.index(after: slash)...])
            var info = stat()
            guard lstat(prefix, &info) == 0 else {
                // No such file: the folder of a split archive's parts, when there are some; the part holding it.
                let folder = String(prefix.dropLast(name.utf8.count + 1))
                let parts = ArchiveParts.parts(named: name, in: folder.isEmpty ? "/" : folder)
                return parts.lazy.map { folder + "/" + $0 }.first { ArchiveIndexes.shared.holds($0, entry: entry) }
                    .map { ($0, entry) }
            }
            if (info.st_mode & S_IFMT) == S_IFREG { return (prefix, entry) }
            if (info.st_mode & S_IFMT) != S_IFDIR { return nil }
        }
        return nil
    }

    /// Whether `path` names an entry an archive (or a split archive's part) holds: from its index, read once per
    /// archive while it is unchanged.
    public static func holds(_ path: String) -> Bool {
        guard let (archive, entry) = split(path) else { return false }
        return ArchiveIndexes.shared.holds(archive, entry: entry)
    }

    /// What stands where a walk listed an archive as `path` (absolute) now.
    public enum State: Sendable {
        /// A file (or a folder) of that name.
        case file
        /// No file, but parts of a split archive walked under that name.
        case parts
        case gone
    }

    public static func state(_ path: String) -> State {
        var info = stat()
        if lstat(path, &info) == 0 { return .file }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        let folder = String(path.dropLast(name.utf8.count + 1))
        return ArchiveParts.parts(named: name, in: folder.isEmpty ? "/" : folder).isEmpty ? .gone : .parts
    }

    /// The archive a source-relative path goes through (`trip.zip` for `trip.zip/DCIM/a.jpg`): its first folder
    /// named as an archive is; nil for a path through none.
    public static func container(of relativePath: String) -> String? {
        var end = relativePath.startIndex
        while let slash = relativePath[end...].firstIndex(of: "/") {
            let prefix = relativePath[..<slash]
            let name = prefix.split(separator: "/").last.map(String.init) ?? ""
            if isArchive(name: name) { return String(prefix) }
            end = relativePath.index(after: slash)
        }
        return nil
    }

    /// Every entry of the archive at `path`, in the archive's order. Entries whose names would leave the archive,
    /// links and repeated names are refused with a reason; a damaged archive yields what precedes the damage and
    /// the failure.
    public static func list(_ path: String) -> ArchiveListing { listWithOffsets(path).listing }

    /// The listing, and for a zip whose central directory reads, its entries by name with where they start.
    static func listWithOffsets(_ path: String) -> (listing: ArchiveListing, zip: [String: ZipDirectory.Entry]?) {
        if path.lowercased().hasSuffix(".zip"), let directory = zipDirectory(path) {
            var listing = ArchiveListing()
            var byName: [String: ZipDirectory.Entry] = [:]
            var seen = Set<String>()
            for entry in directory.entries where !entry.isFolder {
                guard let name = listing.admit(entry.name, isLink: entry.isLink, seen: &seen) else { continue }
                byName[name] = entry
                listing.entries.append(.init(name: name, size: entry.size))
            }
            return (listing, byName)
        }
        return (listSequentially(path), nil)
    }

    /// The central directory of the zip at `path`, or nil when it has none that reads (a truncated zip is then
    /// listed entry by entry from its start).
    private static func zipDirectory(_ path: String) -> ZipDirectory? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return try? ZipDirectory.read(fd, fileSize: Int64(info.st_size))
    }

    /// Every entry, read in the archive's order by libarchive.
    private static func listSequentially(_ path: String) -> ArchiveListing {
        var listing = ArchiveListing()
        var seen = Set<String>()
        do {
            try ArchiveReader.withReader(path) { reader in
                while let raw = try reader.next() {
                    switch raw.kind {
                    case .folder, .other: continue
                    case .link, .file: break
                    }
                    guard let name = listing.admit(raw.name, isLink: raw.kind == .link, seen: &seen) else { continue }
                    // A zip states every size; a tar too. An entry without one is counted as it is read.
                    let size = try raw.size ?? reader.readData { _ in }
                    listing.entries.append(.init(name: name, size: size))
                }
            }
        } catch let error as ArchiveError {
            listing.failure = error
        } catch {
            listing.failure = ArchiveError(archive: path, reason: "\(error)")
        }
        return listing
    }

    /// Streams the bytes of entry `entry` of the archive at `archive` to `body`, a block at a time, and returns
    /// their count. Throws `ArchiveError` naming both when the entry is not there or cannot be read; rethrows what
    /// `body` throws.
    @discardableResult
    public static func read(_ archive: String, entry: String,
                            _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        if archive.lowercased().hasSuffix(".zip"), let zipEntries = ArchiveIndexes.shared.index(of: archive)?.zipEntries {
            guard let found = zipEntries[entry] else {
                throw ArchiveError(archive: archive, entry: entry, reason: "no such entry in the archive", category: .notFound)
            }
            let fd: Int32
            switch SystemCall.result({ open(archive, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }) {
            case .success(let opened): fd = opened
            case .failure(let code):
                throw ArchiveError(archive: archive, entry: entry, reason: "open: \(code)", category: FailureCategory(code))
            }
            defer { close(fd) }
            do {
                return try ZipDirectory.read(found, from: fd, archive: archive, body)
            } catch var error as ArchiveError {
                error.entry = entry
                throw error
            }
        }
        var info = stat()
        switch SystemCall.result({ lstat(archive, &info) }) {
        case .success: break
        case .failure(let code):
            throw ArchiveError(archive: archive, entry: entry, reason: "stat: \(code)", category: FailureCategory(code))
        }
        return try ArchiveCursors.shared.read(archive, fingerprint: FileFingerprint(info), entry: entry, body)
    }
}

/// What an archive holds, as `SourceArchive.list` found it.
public struct ArchiveListing: Sendable {
    public struct Entry: Sendable, Hashable, Codable {
        /// The entry's path inside the archive: relative, no `..`, no empty or `.` part.
        public var name: String
        public var size: Int64
    }

    /// An entry that is not read, and why.
    public struct Refusal: Sendable, Hashable, Codable {
        public var name: String
        public var reason: String
    }

    public var entries: [Entry] = []
    public var refused: [Refusal] = []
    /// Set when the archive could not be read to its end: `entries` holds what came before.
    public var failure: ArchiveError?
}

extension ArchiveListing {
    /// The entry name `raw` is listed under, or nil with the refusal noted: a link (never followed), a name that
    /// would leave the archive, or a second entry of a name (the first is read).
    mutating func admit(_ raw: String, isLink: Bool, seen: inout Set<String>) -> String? {
        guard !isLink else {
            refused.append(.init(name: raw, reason: "a link inside the archive; never followed"))
            return nil
        }
        switch EntryName.checked(raw) {
        case .failure(let refusal):
            refused.append(.init(name: raw, reason: refusal.reason))
            return nil
        case .success(let name):
            guard seen.insert(name).inserted else {
                refused.append(.init(name: name, reason: "a second entry of this name; the first is read"))
                return nil
            }
            return name
        }
    }
}

/// Why an archive, or an entry of one, could not be read, naming both.
public struct ArchiveError: Error, Sendable, CustomStringConvertible, FailureDescribing {
    public var archive: String
    public var entry: String?
    public var reason: String
    public var category: FailureCategory

    public init(archive: String, entry: String? = nil, reason: String, category: FailureCategory = .corrupt) {
        self.archive = archive
        self.entry = entry
        self.reason = reason
        self.category = category
    }

    init(archive: String, reason: String, code: Int32) {
        // The system's failures keep their category; libarchive's own codes (a format error, "misc") mean the
        // archive's bytes are not what its format says.
        let systemCodes: Set<Int32> = [EACCES, EPERM, ENOENT, EIO, ENOMEM, ENOSPC, ENOTDIR]
        let category: FailureCategory = systemCodes.contains(code) ? FailureCategory(Errno(rawValue: code)) : .corrupt
        self.init(archive: archive, reason: reason, category: category)
    }

    public var description: String { "\(archive)\(entry.map { ", entry \($0)" } ?? ""): \(reason)" }
    public var failure: FailureReason { FailureReason(operation: "archive", reason, category: category) }
}

/// An entry's name made safe to place under the archive's path.
enum EntryName {
    struct Refusal: Error { var reason: String }

    static func checked(_ raw: String) -> Result<String, Refusal> {
        if raw.isEmpty { return .failure(Refusal(reason: "an entry without a name")) }
        if raw.hasPrefix("/") { return .failure(Refusal(reason: "an absolute path; never written outside the source")) }
        var parts: [Substring] = []
        for part in raw.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { return .failure(Refusal(reason: "a path that leaves the archive (..); never followed")) }
            parts.append(part)
        }
        guard !parts.isEmpty else { return .failure(Refusal(reason: "an entry without a name")) }
        return .success(parts.joined(separator: "/"))
    }
}
