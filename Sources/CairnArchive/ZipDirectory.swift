import CArchive
import CairnCore
import Glibc

/// A zip's central directory: where each entry's bytes start and how they are stored, so that one entry is read
/// at its offset (a stored one by `pread` alone, a deflated one through zlib) instead of after every entry before
/// it, which is all libarchive's reader offers. Zip64 sizes and offsets; names in UTF-8 when flagged, else CP437.
struct ZipDirectory: Sendable {
    struct Entry: Sendable {
        var name: String
        var method: UInt16
        var flags: UInt16
        var crc: UInt32
        var compressedSize: Int64
        var size: Int64
        var localHeaderOffset: Int64
        var isFolder: Bool
        var isLink: Bool
    }

    var entries: [Entry]

    struct Unreadable: Error { var reason: String }

    /// Reads the central directory of the zip open at `fd`, `fileSize` bytes long.
    static func read(_ fd: Int32, fileSize: Int64) throws(Unreadable) -> ZipDirectory {
        // The end record is in the last 22 bytes plus a comment of at most 65,535.
        let tailLength = Int(min(fileSize, 22 + 65_535))
        let tail = try readBytes(fd, at: fileSize - Int64(tailLength), count: tailLength)
        guard tail.count >= 22, let end = stride(from: tail.count - 22, through: 0, by: -1).first(where: {
            tail.uint32(at: $0) == 0x0605_4b50
        }) else { throw Unreadable(reason: "no zip central directory (a truncated archive?)") }
        var count = Int64(tail.uint16(at: end + 10))
        var directorySize = Int64(tail.uint32(at: end + 12))
        var directoryOffset = Int64(tail.uint32(at: end + 16))
        if count == 0xFFFF || directorySize == 0xFFFF_FFFF || directoryOffset == 0xFFFF_FFFF, end >= 20,
           tail.uint32(at: end - 20) == 0x0706_4b50 {
            let recordOffset = Int64(tail.uint64(at: end - 20 + 8))
            let record = try readBytes(fd, at: recordOffset, count: 56)
            guard record.count == 56, record.uint32(at: 0) == 0x0606_4b50 else {
                throw Unreadable(reason: "a damaged Zip64 end record")
            }
            count = Int64(record.uint64(at: 32))
            directorySize = Int64(record.uint64(at: 40))
            directoryOffset = Int64(record.uint64(at: 48))
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset + directorySize <= fileSize,
              directorySize <= 1 << 31 else { throw Unreadable(reason: "a central directory outside the file") }
        let directory = try readBytes(fd, at: directoryOffset, count: Int(directorySize))
        guard directory.count == Int(directorySize) else { throw Unreadable(reason: "a short central directory") }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(min(count, 1 << 20)))
        var at = 0
        while at + 46 <= directory.count, directory.uint32(at: at) == 0x0201_4b50 {
            let madeBy = directory.uint16(at: at + 4)
            let flags = directory.uint16(at: at + 8)
            let nameLength = Int(directory.uint16(at: at + 28))
            let extraLength = Int(directory.uint16(at: at + 30))
            let commentLength = Int(directory.uint16(at: at + 32))
            let nameStart = at + 46
            guard nameStart + nameLength + extraLength <= directory.count else {
                throw Unreadable(reason: "a central directory entry cut short")
            }
            let nameBytes = directory[nameStart..<nameStart + nameLength]
            var entry = Entry(
                name: flags & 0x0800 != 0 ? String(decoding: nameBytes, as: UTF8.self) : ZipName.unflagged(nameBytes),
                method: directory.uint16(at: at + 10), flags: flags, crc: directory.uint32(at: at + 16),
                compressedSize: Int64(directory.uint32(at: at + 20)), size: Int64(directory.uint32(at: at + 24)),
                localHeaderOffset: Int64(directory.uint32(at: at + 42)), isFolder: nameBytes.last == UInt8(ascii: "/"),
                isLink: madeBy >> 8 == 3 && (directory.uint32(at: at + 38) >> 16) & 0o170000 == 0o120000)
            // Zip64: the sizes and offset that do not fit in 32 bits are in the extra field 0x0001, in this order.
            var extra = nameStart + nameLength
            let extraEnd = extra + extraLength
            while extra + 4 <= extraEnd {
                let id = directory.uint16(at: extra), length = Int(directory.uint16(at: extra + 2))
                if id == 0x0001 {
                    var field = extra + 4
                    func next() -> Int64? {
                        guard field + 8 <= extra + 4 + length else { return nil }
                        defer { field += 8 }
                        return Int64(directory.uint64(at: field))
                    }
                    if entry.size == 0xFFFF_FFFF, let value = next() { entry.size = value }
                    if entry.compressedSize == 0xFFFF_FFFF, let value = next() { entry.compressedSize = value }
                    if entry.localHeaderOffset == 0xFFFF_FFFF, let value = next() { entry.localHeaderOffset = value }
                } else if id == 0x7075, flags & 0x0800 == 0, length > 5, extra + 4 + length <= extraEnd,
                          let name = ZipName.unicodePath(directory[(extra + 4)..<(extra + 4 + length)], of: nameBytes) {
                    entry.name = name
                }
                extra += 4 + length
            }
            entries.append(entry)
            at = extraEnd + commentLength
        }
        return ZipDirectory(entries: entries)
    }

    /// Streams `entry`'s bytes from the zip open at `fd` to `body`, checking them against the entry's CRC-32.
    static func read(_ entry: Entry, from fd: Int32, archive: String, _ body: (UnsafeRawBufferPointer) throws -> Void)
        throws -> Int64
    {
        func damaged(_ reason: String) -> ArchiveError {
            ArchiveError(archive: archive, entry: entry.name, reason: reason)
        }
        if entry.flags & 0x0001 != 0 { throw damaged("an encrypted entry; cairn reads none") }
        guard entry.method == 0 || entry.method == 8 else {
            throw damaged("compressed by method \(entry.method), which cairn does not read (stored and deflated only)")
        }
        let header: [UInt8]
        do { header = try readBytes(fd, at: entry.localHeaderOffset, count: 30) } catch {
            throw damaged(error.reason)
        }
        guard header.count == 30, header.uint32(at: 0) == 0x0403_4b50 else { throw damaged("no local header at its offset") }
        var offset = entry.localHeaderOffset + 30 + Int64(header.uint16(at: 26)) + Int64(header.uint16(at: 28))
        let end = offset + entry.compressedSize
        var crc = crc32(0, nil, 0)
        var total: Int64 = 0
        let chunk = 1 << 17
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { input.deallocate() }
        func deliver(_ block: UnsafeRawBufferPointer) throws {
            guard !block.isEmpty else { return }
            crc = crc32(crc, block.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(block.count))
            total += Int64(block.count)
            try body(block)
        }
        func fill() throws(ArchiveError) -> Int {
            let wanted = Int(min(Int64(chunk), end - offset))
            guard wanted > 0 else { return 0 }
            let result = SystemCall.result { pread(fd, input.baseAddress, wanted, off_t(offset)) }
            guard case .success(let count) = result else {
                if case .failure(let code) = result {
                    throw ArchiveError(archive: archive, entry: entry.name, reason: "read: \(code)",
                                       category: FailureCategory(code))
                }
                return 0
            }
            guard count > 0 else { throw damaged("the archive ends inside this entry") }
            offset += Int64(count)
            return count
        }
        if entry.method == 0 {
            while offset < end {
                let count = try fill()
                try deliver(UnsafeRawBufferPointer(rebasing: input[0..<count]))
            }
        } else {
            var stream = z_stream()
            guard CArchive_inflate_init_raw(&stream) == Z_OK else { throw damaged("zlib: cannot start") }
            defer { inflateEnd(&stream) }
            let output = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
            defer { output.deallocate() }
            var finished = false
            while !finished {
                if stream.avail_in == 0 {
                    let count = try fill()
                    guard count > 0 else { throw damaged("the deflated data ends early") }
                    stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(count)
                }
                stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(chunk)
                let status = inflate(&stream, Z_NO_FLUSH)
                guard status == Z_OK || status == Z_STREAM_END else {
                    throw damaged("the deflated data is damaged (zlib \(status))")
                }
                finished = status == Z_STREAM_END
                try deliver(UnsafeRawBufferPointer(rebasing: output[0..<(chunk - Int(stream.avail_out))]))
            }
        }
        guard total == entry.size else { throw damaged("\(total) bytes where the archive says \(entry.size)") }
        guard UInt32(truncatingIfNeeded: crc) == entry.crc else { throw damaged("the bytes do not match the entry's CRC-32") }
        return total
    }

    private static func readBytes(_ fd: Int32, at offset: Int64, count: Int) throws(Unreadable) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { raw in
                SystemCall.result { pread(fd, raw.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
            }
            guard case .success(let got) = result else { throw Unreadable(reason: "the archive cannot be read") }
            if got == 0 { break }
            filled += got
        }
        return Array(bytes.prefix(filled))
    }
}

extension [UInt8] {
    fileprivate func uint16(at index: Int) -> UInt16 { UInt16(self[index]) | UInt16(self[index + 1]) << 8 }
    fileprivate func uint32(at index: Int) -> UInt32 {
        UInt32(self[index]) | UInt32(self[index + 1]) << 8 | UInt32(self[index + 2]) << 16 | UInt32(self[index + 3]) << 24
    }
    fileprivate func uint64(at index: Int) -> UInt64 { UInt64(uint32(at: index)) | UInt64(uint32(at: index + 4)) << 32 }
}

/// A zip entry's name when its header does not flag it as UTF-8: Info-ZIP's Unicode Path field when it names the
/// same bytes, else the bytes themselves when they are valid UTF-8 (as macOS, Linux and 7-Zip write names without
/// the flag), else CP437 (as DOS and Windows' own zip folders wrote them).
enum ZipName {
    static func unflagged(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        return String(validating: bytes, as: UTF8.self) ?? CP437.decode(bytes)
    }

    /// Field 0x7075: version 1, the CRC-32 of the header's name, then the name in UTF-8. A CRC that does not match
    /// says the name was changed by a tool that did not know the field: the header's name stands.
    static func unicodePath(_ field: ArraySlice<UInt8>, of headerName: ArraySlice<UInt8>) -> String? {
        let start = field.startIndex
        guard field[start] == 1 else { return nil }
        let stored = UInt32(field[start + 1]) | UInt32(field[start + 2]) << 8 | UInt32(field[start + 3]) << 16
            | UInt32(field[start + 4]) << 24
        let name = Array(headerName)
        let crc = name.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        guard UInt32(truncatingIfNeeded: crc) == stored else { return nil }
        return String(validating: field[(start + 5)...], as: UTF8.self)
    }
}

/// The code page of the original IBM PC, which zip names are in unless flagged as UTF-8.
enum CP437 {
    /// The characters of bytes 0x80 to 0xFF.
    static let high: [Character] = Array(
        "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀"
        + "αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{00A0}")

    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        var text = ""
        for byte in bytes { if byte < 0x80 { text.unicodeScalars.append(Unicode.Scalar(byte)) } else { text.append(high[Int(byte) - 0x80]) } }
        return text
    }
}
