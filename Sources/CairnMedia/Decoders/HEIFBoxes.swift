import Foundation

/// What a HEIF file's `meta` box says about its images, read by cairn itself where libheif 1.15 reads it
/// differently from the specification and from later libheif (the reference readers follow those):
/// - it swaps the reported size for an `irot` only when the `irot` comes after the `ispe` (Sony and Canon `.HIF`
///   list it before), though it always turns the pixels;
/// - it refuses a whole file for an auxiliary image that refers to several images (iPhones' depth, HDR gain map
///   and mattes) or for one item's data running past the end of the file.
struct HEIFBoxes {
    /// One item property (`ipco` child), with its payload.
    struct Property {
        var type: String
        var payload: ArraySlice<UInt8>
    }

    /// One `iref` reference: `from` refers to `to` as `type`; `typeOffset` is where the type is in the file.
    struct Reference {
        var type: String
        var from: UInt32
        var to: [UInt32]
        var typeOffset: Int
    }

    /// One `iloc` extent in the file (construction method 0), as absolute byte positions.
    struct Extent {
        var item: UInt32
        var range: Range<Int>
    }

    /// Where the `meta` box starts in the file.
    let metaOffset: Int
    var primaryID: UInt32?
    var properties: [Property] = []
    /// Item ID to its properties' indexes into `properties`, in the order the file associates them.
    var associations: [UInt32: [Int]] = [:]
    var references: [Reference] = []
    var extents: [Extent] = []

    /// Parses a `meta` box (its own header included) found at `offset` in the file; nil when it is not one.
    init?(meta bytes: [UInt8], at offset: Int) {
        metaOffset = offset
        var reader = BoxReader(bytes: bytes, range: 0..<bytes.count)
        guard let meta = reader.next(), meta.type == "meta" else { return nil }
        var children = BoxReader(bytes: bytes, range: meta.body.lowerBound + 4..<meta.body.upperBound)
        while let box = children.next() {
            switch box.type {
            case "pitm": primaryID = Self.itemID(bytes, box, at: box.body.lowerBound + 4)
            case "iprp": parseProperties(bytes, box)
            case "iref": parseReferences(bytes, box)
            case "iloc": parseLocations(bytes, box)
            default: break
            }
        }
    }

    /// The file's `meta` box at the top level, read from `path` (at most 16 MB; cameras may put it after `mdat`).
    static func read(path: String) -> HEIFBoxes? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var offset: off_t = 0
        var header = [UInt8](repeating: 0, count: 16)
        for _ in 0..<64 {
            guard pread(fd, &header, 16, offset) >= 8 else { return nil }
            var size = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 { size = header[8..<16].reduce(0) { $0 << 8 | Int($1) } }
            if type == "meta" {
                let length = size == 0 ? 16 << 20 : min(size, 16 << 20)
                var bytes = [UInt8](repeating: 0, count: length)
                let read = pread(fd, &bytes, length, offset)
                return read > 0 ? HEIFBoxes(meta: Array(bytes.prefix(read)), at: Int(offset)) : nil
            }
            guard size >= 8 else { return nil }
            offset += off_t(size)
        }
        return nil
    }

    /// The item's properties in association order.
    func properties(of item: UInt32) -> [Property] {
        (associations[item] ?? []).compactMap { properties.indices.contains($0) ? properties[$0] : nil }
    }

    /// The item's `irot` and `imir` boxes as one orientation, applied in the order the file lists them (as libheif
    /// applies them to the pixels). `imir` axis 0 flips top and bottom, as libheif and Pillow read it.
    func orientation(of item: UInt32) -> Orientation {
        var orientation = Orientation.identity
        for property in properties(of: item) {
            guard let value = property.payload.first else { continue }
            switch property.type {
            case "irot":
                let turn: [Orientation] = [.identity, .rotate270, .rotate180, .rotate90]  // counterclockwise quarters
                orientation = orientation.then(turn[Int(value & 3)])
            case "imir": orientation = orientation.then(value & 1 == 0 ? .flipVertical : .flipHorizontal)
            default: break
            }
        }
        return orientation
    }

    /// Whether a quarter-turn `irot` comes before the item's `ispe`: libheif 1.15 then reports the stored size.
    func turnPrecedesSize(of item: UInt32) -> Bool {
        for property in properties(of: item) {
            if property.type == "ispe" { return false }
            if property.type == "irot", let value = property.payload.first, value & 1 == 1 { return true }
        }
        return false
    }

    /// The items an item is made of (`dimg`: a grid's tiles), and the item itself.
    func dataItems(of item: UInt32) -> Set<UInt32> {
        var items: Set<UInt32> = [item]
        for reference in references where reference.from == item && reference.type == "dimg" { items.formUnion(reference.to) }
        return items
    }

    // MARK: Parsing

    private static func itemID(_ bytes: [UInt8], _ box: BoxReader.Box, at offset: Int) -> UInt32? {
        let wide = bytes[box.body.lowerBound] > 0  // version 1 and up: 32-bit item IDs
        return BoxReader.number(bytes, at: offset, size: wide ? 4 : 2, within: box.body).map(UInt32.init)
    }

    private mutating func parseProperties(_ bytes: [UInt8], _ iprp: BoxReader.Box) {
        var children = BoxReader(bytes: bytes, range: iprp.body)
        while let box = children.next() {
            if box.type == "ipco" {
                var items = BoxReader(bytes: bytes, range: box.body)
                while let property = items.next() {
                    // irot and imir carry their byte right after the header; ispe is a full box.
                    properties.append(Property(type: property.type, payload: bytes[property.body]))
                }
            } else if box.type == "ipma" {
                let version = bytes[box.body.lowerBound], flags = bytes[box.body.lowerBound + 3]
                var at = box.body.lowerBound + 4
                guard let count = BoxReader.number(bytes, at: at, size: 4, within: box.body) else { continue }
                at += 4
                for _ in 0..<min(count, 1 << 20) {
                    guard let item = BoxReader.number(bytes, at: at, size: version < 1 ? 2 : 4, within: box.body),
                          let associationCount = BoxReader.number(bytes, at: at + (version < 1 ? 2 : 4), size: 1, within: box.body)
                    else { return }
                    at += (version < 1 ? 2 : 4) + 1
                    var indexes: [Int] = []
                    for _ in 0..<associationCount {
                        let size = flags & 1 == 1 ? 2 : 1
                        guard let value = BoxReader.number(bytes, at: at, size: size, within: box.body) else { return }
                        at += size
                        let index = value & (size == 2 ? 0x7FFF : 0x7F)
                        if index > 0 { indexes.append(index - 1) }  // 0 means "no property"
                    }
                    associations[UInt32(item), default: []].append(contentsOf: indexes)
                }
            }
        }
    }

    private mutating func parseReferences(_ bytes: [UInt8], _ iref: BoxReader.Box) {
        let size = bytes[iref.body.lowerBound] == 0 ? 2 : 4
        var children = BoxReader(bytes: bytes, range: iref.body.lowerBound + 4..<iref.body.upperBound)
        while let box = children.next() {
            guard let from = BoxReader.number(bytes, at: box.body.lowerBound, size: size, within: box.body),
                  let count = BoxReader.number(bytes, at: box.body.lowerBound + size, size: 2, within: box.body) else { continue }
            var to: [UInt32] = []
            for index in 0..<count {
                guard let id = BoxReader.number(bytes, at: box.body.lowerBound + size + 2 + index * size, size: size,
                                                within: box.body) else { break }
                to.append(UInt32(id))
            }
            references.append(Reference(type: box.type, from: UInt32(from), to: to,
                                        typeOffset: metaOffset + box.body.lowerBound - 4))
        }
    }

    private mutating func parseLocations(_ bytes: [UInt8], _ iloc: BoxReader.Box) {
        let body = iloc.body, version = bytes[body.lowerBound]
        var at = body.lowerBound + 4
        guard let sizes = BoxReader.number(bytes, at: at, size: 2, within: body) else { return }
        let offsetSize = sizes >> 12, lengthSize = sizes >> 8 & 15, baseSize = sizes >> 4 & 15
        let indexSize = version > 0 ? sizes & 15 : 0
        at += 2
        let idSize = version < 2 ? 2 : 4
        guard let count = BoxReader.number(bytes, at: at, size: idSize, within: body) else { return }
        at += idSize
        func read(_ size: Int) -> Int? {
            defer { at += size }
            return size == 0 ? 0 : BoxReader.number(bytes, at: at, size: size, within: body)
        }
        for _ in 0..<count {
            guard let item = read(idSize) else { return }
            let method = version > 0 ? (read(2) ?? 0) & 15 : 0
            guard read(2) != nil, let base = read(baseSize), let extentCount = read(2) else { return }
            for _ in 0..<extentCount {
                guard read(indexSize) != nil, let offset = read(offsetSize), let length = read(lengthSize) else { return }
                // Method 1 (inside `idat`) and 2 (another item) are not positions in the file.
                if method == 0, length > 0 {
                    extents.append(Extent(item: UInt32(item), range: base + offset..<base + offset + length))
                }
            }
        }
    }
}

/// Walks sibling ISO-BMFF boxes within a range of bytes.
struct BoxReader {
    struct Box {
        var type: String
        /// The box's content, after its header.
        var body: Range<Int>
    }

    let bytes: [UInt8]
    var range: Range<Int>

    mutating func next() -> Box? {
        let start = range.lowerBound
        guard let size32 = Self.number(bytes, at: start, size: 4, within: range), start + 8 <= range.upperBound else { return nil }
        let type = String(decoding: bytes[start + 4..<start + 8], as: UTF8.self)
        var header = 8, size = size32
        if size == 1 {
            guard let large = Self.number(bytes, at: start + 8, size: 8, within: range) else { return nil }
            size = large
            header = 16
        } else if size == 0 {
            size = range.upperBound - start
        }
        guard size >= header, start + size <= range.upperBound else { return nil }
        range = start + size..<range.upperBound
        return Box(type: type, body: start + header..<start + size)
    }

    /// A big-endian number of `size` bytes (0...8) at `offset`, nil when it does not fit in `range`.
    static func number(_ bytes: [UInt8], at offset: Int, size: Int, within range: Range<Int>) -> Int? {
        guard size <= 8, offset >= range.lowerBound, offset + size <= range.upperBound else { return nil }
        var value = 0
        for index in offset..<offset + size { value = value << 8 | Int(bytes[index]) }
        return value < 0 ? nil : value
    }
}

extension Orientation {
    /// This orientation followed by `next`.
    func then(_ next: Orientation) -> Orientation {
        // The linear parts of the display-to-stored maps multiply in the order the turns are made.
        let a = sourceMap(width: 0, height: 0), b = next.sourceMap(width: 0, height: 0)
        let product = (a.a * b.a + a.b * b.d, a.a * b.b + a.b * b.e, a.d * b.a + a.e * b.d, a.d * b.b + a.e * b.e)
        return Orientation.allCases.first { candidate in
            let m = candidate.sourceMap(width: 0, height: 0)
            return (m.a, m.b, m.d, m.e) == product
        } ?? .identity
    }

    /// The orientation that undoes this one.
    var inverse: Orientation { Orientation.allCases.first { then($0) == .identity } ?? .identity }
}
