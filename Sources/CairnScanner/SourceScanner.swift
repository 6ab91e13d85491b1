import CairnArchive
import CairnCore
import Glibc

/// Walks a source folder with `openat`/`fstatat`, never following a symbolic link.
public struct SourceScanner: Sendable {
    public static let sourceMarkerName = ".cairn-source"

    public var root: String
    /// Folders (by device and inode) the walk must not enter, such as a library kept inside its own source.
    public var excludedDirectories: Set<DirectoryIdentity>
    /// Checked before each folder and each batch handed over: once set, the walk stops and throws `.interrupted`.
    public var interrupt: Interrupt?
    /// With `.read`, each archive is walked as a folder of its own name (`trip.zip/DCIM/a.jpg`), in place.
    public var archives: ArchiveHandling = .ignore
    /// Where the archives' listings are kept between walks: an unchanged archive is then not read at all.
    public var savedListings: SavedListings?
    /// An archive modified less than this long ago may still be being written (a download, a copy): not read, a
    /// note says so, and the next walk reads it.
    public static let settlingSeconds: Int64 = 60

    public struct DirectoryIdentity: Hashable, Sendable {
        public var device: UInt64
        public var inode: UInt64

        /// The identity of the folder at `path`, or nil when there is none.
        public init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    public init(root: String, excludedDirectories: Set<DirectoryIdentity> = [], interrupt: Interrupt? = nil,
                archives: ArchiveHandling = .ignore) {
        self.root = root
        self.archives = archives
        self.excludedDirectories = excludedDirectories
        self.interrupt = interrupt
    }

    public func scan() throws(ScanError) -> ScanReport {
        try walk(sink: nil)
    }

    /// Walks the source handing its media files to `media` in batches of up to `batchSize`, in path order, rather
    /// than holding them all: the report's `mediaFiles` stays empty (its counts are filled in). An error `media`
    /// throws ends the walk and is rethrown.
    ///
    /// With `sidecars`, the sidecar files are handed over the same way (in batches, in walk order) and the report's
    /// `sidecarFiles` stays empty too.
    public func scan(
        batchSize: Int, media: @escaping ([SourceFile]) throws -> Void,
        sidecars: (([SourceFile]) throws -> Void)? = nil
    ) throws(ScanError) -> ScanReport {
        try walk(sink: MediaSink(batchSize: max(1, batchSize), body: media, sidecarBody: sidecars))
    }

    private func walk(sink: MediaSink?) throws(ScanError) -> ScanReport {
        var info = stat()
        // The root itself may be a link (a user's ~/Pictures -> /mnt/photos); nothing below it is followed.
        switch SystemCall.result({ stat(root, &info) }) {
        case .success: break
        case .failure(.noSuchFileOrDirectory): throw .rootMissing(root)
        case .failure(let code): throw .rootUnreadable(SystemCallError("stat", path: root, code: code))
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw .rootNotDirectory(root) }
        let fd: Int32
        do { fd = try SystemCall.result { open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", root) } catch {
            throw .rootUnreadable(error)
        }

        var walk = Walk(excluded: excludedDirectories, sink: sink, interrupt: interrupt,
                        archives: archives == .read ? ArchiveWalk(root: root, saved: savedListings) : nil)
        walk.report.root = root
        walk.report.hasSourceMarker = faccessat(fd, Self.sourceMarkerName, F_OK, AT_SYMLINK_NOFOLLOW) == 0
        walk.visit(directory: fd, prefix: "")
        walk.flush()
        walk.flushSidecars()
        if let error = walk.sinkError { throw .sinkFailed("\(error)") }
        if walk.stopped { throw .interrupted(root) }
        var report = walk.report
        report.mediaFiles = walk.media.sorted { PathOrder.precedes($0.relativePath, $1.relativePath) }
        report.sidecarFiles = walk.sidecars.sorted { PathOrder.precedes($0.relativePath, $1.relativePath) }
        report.symlinksSkipped.sort()
        return report
    }
}

/// Where a streaming walk sends its media files.
private struct MediaSink {
    var batchSize: Int
    var body: ([SourceFile]) throws -> Void
    /// Where sidecars go; without it the walk keeps them for the report.
    var sidecarBody: (([SourceFile]) throws -> Void)?
}

/// The mutable state of one walk. Folders are listed on worker threads a few ahead of where the walk stands (the
/// system calls of a big walk are most of its time), and merged here in path order.
private struct Walk {
    /// How many sub-folders of a folder are listed ahead of the walk: what a walk holds in memory beyond the folder
    /// it is in.
    static let lookahead = 4

    let excluded: Set<SourceScanner.DirectoryIdentity>
    let sink: MediaSink?
    /// Every media file (no sink), or the batch not yet handed to the sink.
    var media: [SourceFile] = []
    var sinkError: (any Error)?
    /// Every sidecar (no sidecar sink), or the batch not yet handed to it.
    var sidecars: [SourceFile] = []
    /// What the walk counted and found so far (its files are in `media` and `sidecars`).
    var report = ScanReport(root: "")
    let interrupt: Interrupt?
    let archives: ArchiveWalk?
    /// The interrupt was seen: the walk enters no more folders and hands nothing more over.
    private(set) var stopped = false

    private mutating func stopping() -> Bool {
        if !stopped, interrupt?.isInterrupted == true { stopped = true }
        return stopped
    }

    /// Hands the batch to the sink, if there is one; after a sink error the walk keeps nothing more.
    mutating func flush() {
        guard let sink, !media.isEmpty else { return }
        defer { media.removeAll(keepingCapacity: true) }
        guard sinkError == nil, !stopping() else { return }
        do { try sink.body(media) } catch { sinkError = error }
    }

    /// Hands the sidecars gathered so far to their sink, if there is one.
    mutating func flushSidecars() {
        guard let body = sink?.sidecarBody, !sidecars.isEmpty else { return }
        defer { sidecars.removeAll(keepingCapacity: true) }
        guard sinkError == nil, !stopping() else { return }
        do { try body(sidecars) } catch { sinkError = error }
    }

    /// Walks the folder open at `fd` (taking ownership of it) and everything below it.
    mutating func visit(directory fd: Int32, prefix: String) {
        visit(Self.list(FolderHandle(fd), prefix: prefix, archives: archives), prefix: prefix)
    }

    private mutating func visit(_ listing: Listing, prefix: String) {
        report.otherFiles += listing.otherFiles
        report.junkSkipped += listing.junk
        report.symlinksSkipped += listing.symlinks
        report.issues += listing.issues
        report.refusedEntries += listing.refusedEntries
        report.settlingArchives += listing.settlingArchives
        report.archivesListed += listing.archivesListed
        report.archivesUnchanged += listing.archivesUnchanged
        report.sidecarCount += listing.sidecars.count
        sidecars += listing.sidecars
        if let sink, sidecars.count >= sink.batchSize { flushSidecars() }
        let files = listing.files
        let subfolders = listing.subfolders
        var pending: [BlockingPool.Pending<Listing>] = []
        func prefetch(_ index: Int) {
            guard index < subfolders.count, let parent = listing.handle else { return }
            let name = subfolders[index], excluded = self.excluded, archives = self.archives
            if let archives, let files = listing.archives[name] {
                pending.append(BlockingPool.Pending { Listing.archive(name, files: files, prefix: prefix, walk: archives) })
            } else {
                pending.append(BlockingPool.Pending {
                    Self.open(name, in: parent, prefix: prefix, excluded: excluded, archives: archives)
                })
            }
        }
        for index in 0..<min(Self.lookahead, subfolders.count) { prefetch(index) }
        // Path order across folders: a folder sorts as its name plus "/", so "a-1.jpg" comes before "a/b.jpg" as
        // in a sort of whole paths, and a streaming walk hands files out already sorted (bytewise: `PathOrder`).
        var nextFile = 0
        for (index, name) in subfolders.enumerated() {
            if stopping() { return }
            let key = prefix + name + "/"
            while nextFile < files.count, PathOrder.precedes(files[nextFile].relativePath, key) {
                take(files[nextFile])
                nextFile += 1
            }
            prefetch(index + Self.lookahead)
            visit(pending[index].wait() ?? Listing(), prefix: key)
        }
        while nextFile < files.count {
            take(files[nextFile])
            nextFile += 1
        }
    }

    private mutating func take(_ file: SourceFile) {
        report.mediaCount += 1
        report.mediaBytes += file.fingerprint.size
        media.append(file)
        if let sink, media.count >= sink.batchSize { flush() }
    }

    /// Opens sub-folder `name` of `parent` (never through a link) and lists it; an excluded folder lists as empty.
    private static func open(_ name: String, in parent: FolderHandle, prefix: String,
                             excluded: Set<SourceScanner.DirectoryIdentity>, archives: ArchiveWalk?) -> Listing {
        let child: Int32
        switch SystemCall.result({ openat(parent.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }) {
        case .success(let fd): child = fd
        case .failure(let code): return Listing(issues: [ScanIssue(relativePath: prefix + name, reason: code.description,
                                                                        category: FailureCategory(code))])
        }
        var info = stat()
        if fstat(child, &info) == 0, excluded.contains(SourceScanner.DirectoryIdentity(info)) {
            close(child)
            return Listing()
        }
        return list(FolderHandle(child), prefix: prefix + name + "/", archives: archives)
    }

    /// Reads one folder: its media sorted, its sub-folders to enter, and what else it holds.
    private static func list(_ handle: FolderHandle, prefix: String, archives: ArchiveWalk?) -> Listing {
        var listing = Listing()
        // The stream reads through its own descriptor, so the handle stays open for the sub-folders.
        let opened = SystemCall.result { dup(handle.fd) }.flatMap { streamFD in
            SystemCall.pointer { fdopendir(streamFD) }.mapError { code in
                close(streamFD)
                return code
            }
        }
        guard case .success(let stream) = opened else {
            if case .failure(let code) = opened {
                listing.issues.append(ScanIssue(relativePath: prefix.isEmpty ? "." : prefix, reason: code.description,
                                                category: FailureCategory(code)))
            }
            return listing
        }
        defer { closedir(stream) }
        while true {
            let next = SystemCall.next { readdir(stream) }
            guard case .success(let found) = next, let entry = found else {
                if case .failure(let code) = next {
                    listing.issues.append(ScanIssue(relativePath: prefix, reason: "reading the folder failed: \(code)",
                                                    category: FailureCategory(code)))
                }
                break
            }
            // The name straight from the entry (no copy of its bytes first: this runs once per file of the source).
            let decoded: (name: String?, dots: Bool, lossy: String) = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[..<(raw.firstIndex(of: 0) ?? raw.count)])
                if bytes.count <= 2, bytes.allSatisfy({ $0 == 0x2E }) { return (nil, true, "") }
                if let name = String(validating: bytes, as: UTF8.self) { return (name, false, "") }
                return (nil, false, String(decoding: bytes, as: UTF8.self))
            }
            if decoded.dots { continue }
            guard let name = decoded.name else {
                listing.issues.append(ScanIssue(relativePath: prefix + decoded.lossy,
                                                reason: "the name is not valid UTF-8; skipped"))
                continue
            }
            let relative = prefix + name
            var type = Int32(entry.pointee.d_type)
            var info = stat()
            var haveInfo = false
            if type == Int32(DT_UNKNOWN) || type == Int32(DT_REG) {
                if case .failure(let code) = SystemCall.result({ fstatat(handle.fd, name, &info, AT_SYMLINK_NOFOLLOW) }) {
                    listing.issues.append(ScanIssue(relativePath: relative, reason: code.description,
                                                    category: FailureCategory(code)))
                    continue
                }
                haveInfo = true
                switch info.st_mode & S_IFMT {
                case S_IFDIR: type = Int32(DT_DIR)
                case S_IFLNK: type = Int32(DT_LNK)
                case S_IFREG: type = Int32(DT_REG)
                default: type = Int32(DT_UNKNOWN)
                }
            }
            switch type {
            case Int32(DT_DIR):
                if JunkRules.isJunkDirectory(name) { listing.junk += 1 } else { listing.subfolders.append(name) }
            case Int32(DT_LNK):
                listing.symlinks.append(relative)
            case Int32(DT_REG):
                if JunkRules.isJunkFile(name) { listing.junk += 1; continue }
                if let archives, haveInfo || fstatat(handle.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                   SourceArchive.isArchive(name: name) {
                    let modified = FileFingerprint(info).modificationTimeNanoseconds
                    if archives.startedNanoseconds - modified < SourceScanner.settlingSeconds * 1_000_000_000 {
                        listing.settlingArchives.append(ScanIssue(
                            relativePath: relative, reason: "an archive modified under a minute ago (still being written?): "
                                + "read by the next run"))
                    } else {
                        listing.archives[ArchiveParts.folderName(of: name) ?? name, default: []].append(name)
                    }
                    continue
                }
                classify(name: name, relative: relative, info: haveInfo ? info : nil, directory: handle.fd, into: &listing)
            default:
                listing.otherFiles += 1  // sockets, fifos, devices: never media
            }
        }
        if listing.files.count > 1 {
            listing.files = PathOrder.sortedIndices(of: listing.files.map(\.relativePath)).map { listing.files[$0] }
        }
        for (folder, files) in listing.archives {
            // A folder or file of the same name as a split archive's folder keeps its name: the parts their own.
            let clashes = files.count > 1 && files.contains(folder) || listing.subfolders.contains(folder)
                || listing.files.contains { $0.relativePath == prefix + folder }
            if files == [folder] || !clashes {
                listing.subfolders.append(folder)
                listing.archives[folder] = files.sorted { PathOrder.precedes($0, $1) }
            } else {
                listing.archives[folder] = nil
                for file in files {
                    listing.subfolders.append(file)
                    listing.archives[file] = [file]
                }
            }
        }
        listing.subfolders.sort { PathOrder.precedes($0 + "/", $1 + "/") }
        if !listing.subfolders.isEmpty { listing.handle = handle }
        return listing
    }

    /// Files a media file, a sidecar, or another file.
    private static func classify(name: String, relative: String, info: stat?, directory: Int32, into listing: inout Listing) {
        guard let info else { return }
        var kind = MediaClassifier.kind(forExtension: MediaClassifier.fileExtension(of: name))
        if kind == .other {
            // No media extension: the first bytes decide, so an extensionless camera file is still found.
            kind = sniff(name: name, directory: directory) ?? .other
        }
        if kind == .other {
            if SidecarMatcher.isSidecar(name: name), info.st_size <= SidecarMatcher.maxBytes {
                listing.sidecars.append(SourceFile(relativePath: relative, fingerprint: FileFingerprint(info), kind: .other))
            } else {
                listing.otherFiles += 1
            }
            return
        }
        listing.files.append(SourceFile(relativePath: relative, fingerprint: FileFingerprint(info), kind: kind))
    }

    private static func sniff(name: String, directory: Int32) -> MediaKind? {
        let fd = openat(directory, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 32)
        let count = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 32, 0) }
        guard count > 0 else { return nil }
        return MediaClassifier.kind(forHeader: header.prefix(count))
    }
}
