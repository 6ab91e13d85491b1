#if canImport(Glibc)
import Glibc
#endif
import CairnCore
import SystemPackage

/// A store in a local folder (the library's own layout): a key is the path of a file under `root`. A put copies to
/// `root/.partial/`, makes the copy durable, then links it into place, so the object appears whole or not at all
/// and a second writer of the same key finds it there (`link` refuses to replace); what a kill leaves in
/// `.partial/` is never listed.
public struct FolderStore: ObjectStore {
    public let root: String
    static let partials = ".partial"

    public init(root: String) {
        self.root = root
    }

    public var description: String { root }

    func path(of key: ObjectKey) -> String { root + "/" + key.text }

    public func put(_ key: ObjectKey, fromFile source: String) async throws(StoreError) -> PutOutcome {
        try await put(key) { (partial) throws(SystemCallError) in try copy(source, to: partial) }
    }

    public func put(_ key: ObjectKey, bytes: [UInt8]) async throws(StoreError) -> PutOutcome {
        try await put(key) { (partial) throws(SystemCallError) in try write(bytes, to: partial) }
    }

    /// `fill` writes the object's bytes, durably, to the new file it is given; the file is then linked into place.
    private func put(_ key: ObjectKey, filling fill: @escaping @Sendable (String) throws(SystemCallError) -> Void)
        async throws(StoreError) -> PutOutcome {
        guard key.text.split(separator: "/").first != Substring(Self.partials) else {
            throw StoreError(.refused, key: key.text, "is in the store's folder for partial writes")
        }
        return try await blocking { () throws(StoreError) in try putNow(key, filling: fill) }
    }

    private func putNow(_ key: ObjectKey, filling fill: (String) throws(SystemCallError) -> Void) throws(StoreError)
        -> PutOutcome {
        let destination = path(of: key)
        if (try? LocalFile.size(destination)) != nil { return .alreadyThere }
        let partialFolder = root + "/" + Self.partials
        try makeFolders(partialFolder)
        let partial = partialFolder + "/" + String(UInt64.random(in: 0 ... .max), radix: 36) + ".put"
        defer { _ = unlink(partial) }
        try mapped(key) { () throws(SystemCallError) in try fill(partial) }
        try makeFolders(String(destination[..<destination.lastIndex(of: "/")!]))
        switch SystemCall.result({ link(partial, destination) }) {
        case .success: break
        case .failure(.fileExists): return .alreadyThere
        case .failure(let code): throw Self.failure(SystemCallError("link", path: destination, code: code), key: key)
        }
        try mapped(key) { () throws(SystemCallError) in try syncFolder(of: destination) }
        return .created
    }

    public func read(_ key: ObjectKey, range: Range<Int64>?) async throws(StoreError) -> [UInt8] {
        let file = path(of: key)
        return try await blocking { () throws(StoreError) in
            try mapped(key) { () throws(SystemCallError) -> [UInt8] in try LocalFile.read(file, range: range) }
        }
    }

    public func size(of key: ObjectKey) async throws(StoreError) -> Int64? {
        let file = path(of: key)
        return try await blocking { () throws(StoreError) -> Int64? in
            var status = stat()
            switch SystemCall.result({ stat(file, &status) }) {
            case .success: return (status.st_mode & S_IFMT) == S_IFREG ? Int64(status.st_size) : nil
            case .failure(.noSuchFileOrDirectory), .failure(.notDirectory): return nil
            case .failure(let code): throw Self.failure(SystemCallError("stat", path: file, code: code), key: key)
            }
        }
    }

    public func list(prefix: String, after: ObjectKey?, limit: Int) async throws(StoreError) -> [StoredObject] {
        try await blocking { () throws(StoreError) -> [StoredObject] in
            // The walk starts in the deepest folder the prefix names whole; names are visited in the order of the
            // keys they lead to (a folder as its name and a slash), so a page is the first `limit` keys past `after`.
            let folder = prefix.lastIndex(of: "/").map { String(prefix[..<$0]) } ?? ""
            var page: [StoredObject] = []
            try walk(folder: folder, prefix: prefix, after: after?.text, limit: limit, into: &page)
            return page
        }
    }

    private func walk(folder: String, prefix: String, after: String?, limit: Int,
                      into page: inout [StoredObject]) throws(StoreError) {
        let directory = folder.isEmpty ? root : root + "/" + folder
        let entries: [(name: String, isFolder: Bool, size: Int64)]
        do {
            entries = try FolderEntries.read(directory)
        } catch {
            if error.code == .noSuchFileOrDirectory || error.code == .notDirectory { return }
            throw Self.failure(error, key: folder)
        }
        let ordered = entries.map { (key: (folder.isEmpty ? "" : folder + "/") + $0.name + ($0.isFolder ? "/" : ""),
                                     entry: $0) }
            .sorted { PathOrder.precedes($0.key, $1.key) }
        for (key, entry) in ordered where page.count < limit {
            if folder.isEmpty && entry.name == Self.partials { continue }
            // Only keys that start with the prefix, or folders that may hold some.
            guard key.hasPrefix(prefix) || (entry.isFolder && prefix.hasPrefix(key)) else { continue }
            if entry.isFolder {
                // A folder whose every key sorts at or before `after` is skipped unread.
                if let after, !after.hasPrefix(key), !PathOrder.precedes(after, key) { continue }
                try walk(folder: String(key.dropLast()), prefix: prefix, after: after, limit: limit, into: &page)
            } else if after.map({ PathOrder.precedes($0, key) }) ?? true {
                page.append(StoredObject(key: try ObjectKey(key), size: entry.size))
            }
        }
    }

    public func delete(_ key: ObjectKey) async throws(StoreError) {
        let file = path(of: key)
        try await blocking { () throws(StoreError) in
            switch SystemCall.result({ unlink(file) }) {
            case .success, .failure(.noSuchFileOrDirectory), .failure(.notDirectory): return
            case .failure(let code): throw Self.failure(SystemCallError("unlink", path: file, code: code), key: key)
            }
        }
    }

    // MARK: Helpers

    private func blocking<Value: Sendable>(_ body: @escaping @Sendable () throws(StoreError) -> Value)
        async throws(StoreError) -> Value {
        do {
            return try await BlockingPool.run { () throws -> Value in try body() }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.system(.other), "\(root): \(error)")
        }
    }

    private func mapped<Value>(_ key: ObjectKey, _ body: () throws(SystemCallError) -> Value) throws(StoreError) -> Value {
        do { return try body() } catch { throw Self.failure(error, key: key.text) }
    }

    static func failure(_ error: SystemCallError, key: ObjectKey) -> StoreError { failure(error, key: key.text) }

    static func failure(_ error: SystemCallError, key: String) -> StoreError {
        StoreError(.system(FailureCategory(error.code)), key: key, error.description)
    }

    private func makeFolders(_ folder: String) throws(StoreError) {
        var path = ""
        for segment in folder.split(separator: "/", omittingEmptySubsequences: false) {
            path += (path.isEmpty && segment.isEmpty) ? "/" : (path.isEmpty || path == "/" ? "" : "/") + segment
            if segment.isEmpty { continue }
            switch SystemCall.result({ mkdir(path, 0o755) }) {
            case .success, .failure(.fileExists): continue
            case .failure(let code): throw Self.failure(SystemCallError("mkdir", path: path, code: code), key: folder)
            }
        }
    }

    /// The bytes of `source` into a new file `destination`, flushed to the disk before it returns.
    private func copy(_ source: String, to destination: String) throws(SystemCallError) {
        let input = try SystemCall.result { open(source, O_RDONLY | O_CLOEXEC) }.get("open", source)
        defer { _ = SystemCall.once { close(input) } }
        let output = try SystemCall.result { open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
            .get("create", destination)
        defer { _ = SystemCall.once { close(output) } }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try buffer.withUnsafeMutableBytes { raw in
                SystemCall.result { Glibc.read(input, raw.baseAddress, raw.count) }
            }.get("read", source)
            if count == 0 { break }
            let written = buffer.withUnsafeBytes { raw in
                Result { () throws(SystemCallError) in
                    try writeFully(output, UnsafeRawBufferPointer(rebasing: raw.prefix(count)), path: destination)
                }
            }
            try written.get()
        }
        try SystemCall.result { fsync(output) }.get("fsync", destination)
    }

    /// `bytes` into a new file `destination`, flushed to the disk before it returns.
    private func write(_ bytes: [UInt8], to destination: String) throws(SystemCallError) {
        let output = try SystemCall.result { open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
            .get("create", destination)
        defer { _ = SystemCall.once { close(output) } }
        try bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallError) in try writeFully(output, raw, path: destination) }
        }.get()
        try SystemCall.result { fsync(output) }.get("fsync", destination)
    }

    private func syncFolder(of file: String) throws(SystemCallError) {
        let folder = String(file[..<file.lastIndex(of: "/")!])
        let descriptor = try SystemCall.result { open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", folder)
        defer { _ = SystemCall.once { close(descriptor) } }
        try SystemCall.result { fsync(descriptor) }.get("fsync", folder)
    }
}

/// The entries of one folder (not `.` and `..`): name, whether it is a folder, and a file's size.
enum FolderEntries {
    static func read(_ folder: String) throws(SystemCallError) -> [(name: String, isFolder: Bool, size: Int64)] {
        let descriptor = try SystemCall.result { open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }.get("open", folder)
        guard let stream = fdopendir(descriptor) else {
            _ = close(descriptor)
            throw SystemCallError("fdopendir", path: folder, code: Errno(rawValue: errno))
        }
        defer { closedir(stream) }
        var entries: [(name: String, isFolder: Bool, size: Int64)] = []
        while let entry = try SystemCall.next({ readdir(stream) }).get("readdir", folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var status = stat()
            guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            let kind = status.st_mode & S_IFMT
            if kind == S_IFDIR {
                entries.append((name, true, 0))
            } else if kind == S_IFREG {
                entries.append((name, false, Int64(status.st_size)))
            }
        }
        return entries
    }
}
