import CArchive
import CairnCore
import Glibc

/// One archive open for reading with libarchive, its entries in the order the archive holds them.
///
/// The C handle is owned here and freed with the reader. A reader is used on one thread at a time: libarchive's
/// names are converted in that thread's locale, which `withReader` sets to UTF-8 while the reader is used.
final class ArchiveReader {
    private let handle: OpaquePointer
    let path: String

    init(path: String) throws(ArchiveError) {
        guard let handle = CArchive_reader() else { throw ArchiveError(archive: path, reason: "libarchive: out of memory") }
        self.handle = handle
        self.path = path
        // On failure the handle is freed by `deinit`, as always.
        if archive_read_open_filename(handle, path, 1 << 16) != ARCHIVE_OK {
            throw ArchiveError(archive: path, reason: Self.message(handle), code: archive_errno(handle))
        }
    }

    deinit { archive_read_free(handle) }

    /// The next entry's header, or nil at the archive's end. A damaged header throws: what follows it is unreadable.
    func next() throws(ArchiveError) -> RawArchiveEntry? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { return nil }
        guard status == ARCHIVE_OK || status == ARCHIVE_WARN, let entry else {
            throw ArchiveError(archive: path, reason: Self.message(handle), code: archive_errno(handle))
        }
        let name: String
        if let utf8 = archive_entry_pathname_utf8(entry) {
            name = String(cString: utf8)
        } else if let raw = archive_entry_pathname(entry) {
            name = String(decoding: UnsafeRawBufferPointer(start: raw, count: strlen(raw)), as: UTF8.self)
        } else {
            name = ""
        }
        let type: RawArchiveEntry.Kind
        switch archive_entry_filetype(entry) {
        case S_IFREG: type = archive_entry_hardlink(entry) == nil ? .file : .link
        case S_IFDIR: type = .folder
        case S_IFLNK: type = .link
        default: type = archive_entry_hardlink(entry) == nil ? .other : .link
        }
        let size: Int64? = archive_entry_size_is_set(entry) != 0 ? Int64(archive_entry_size(entry)) : nil
        return RawArchiveEntry(name: name, kind: type, size: size)
    }

    /// Hands the current entry's bytes to `body`, a block at a time, and returns how many there were.
    @discardableResult
    func readData(_ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        var total: Int64 = 0
        while true {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(handle, &block, &size, &offset)
            if status == ARCHIVE_EOF { return total }
            guard status == ARCHIVE_OK || status == ARCHIVE_WARN else {
                throw ArchiveError(archive: path, reason: Self.message(handle), code: archive_errno(handle))
            }
            // A sparse tar entry's holes: zeros the archive does not store.
            if offset > total {
                let zeros = [UInt8](repeating: 0, count: Int(min(offset - total, 1 << 16)))
                while total < offset {
                    let count = Int(min(Int64(zeros.count), offset - total))
                    try zeros.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                    total += Int64(count)
                }
            }
            if size > 0, let block {
                try body(UnsafeRawBufferPointer(start: block, count: size))
                total += Int64(size)
            }
        }
    }

    /// Passes over the current entry's bytes (a seek where the format allows one).
    func skipData() throws(ArchiveError) {
        guard archive_read_data_skip(handle) == ARCHIVE_OK else {
            throw ArchiveError(archive: path, reason: Self.message(handle), code: archive_errno(handle))
        }
    }

    private static func message(_ handle: OpaquePointer) -> String {
        archive_error_string(handle).map { String(cString: $0) } ?? "not a readable archive"
    }

    /// Runs `body` with a reader of `path`, names decoded as UTF-8 on this thread meanwhile.
    static func withReader<T>(_ path: String, _ body: (ArchiveReader) throws -> T) throws -> T {
        try withUTF8Names { try body(try ArchiveReader(path: path)) }
    }

    /// Runs `body` with this thread's names decoded as UTF-8 (a reader kept between uses is used inside one).
    static func withUTF8Names<T>(_ body: () throws -> T) rethrows -> T {
        let previous = CArchive_enter_utf8()
        defer { CArchive_leave(previous) }
        return try body()
    }
}

/// An entry's header as the archive states it, before its name is checked.
struct RawArchiveEntry {
    enum Kind { case file, folder, link, other }
    var name: String
    var kind: Kind
    var size: Int64?
}
