import Foundation

/// Writes HEIF files box by box, with the HEVC pictures `heif-enc` encodes, in the layouts phones and cameras write
/// and libheif's own encoder does not: transformations in a chosen order, thumbnails with transformations of their
/// own, an EXIF orientation beside no transformation at all, auxiliary images that refer to several images.
public struct HEIFBuilder {
    /// One item: its type, its property boxes in association order, and its data.
    public struct Item {
        public var type: String
        public var properties: [[UInt8]]
        public var data: [UInt8]
        public var hidden: Bool

        public init(type: String = "hvc1", properties: [[UInt8]], data: [UInt8], hidden: Bool = false) {
            self.type = type
            self.properties = properties
            self.data = data
            self.hidden = hidden
        }
    }

    /// An encoded picture: its `hvcC` and `ispe` property boxes and its coded data.
    public struct Picture {
        public var hvcC: [UInt8]
        public var ispe: [UInt8]
        public var data: [UInt8]
    }

    /// Items get IDs 1, 2, … in this order; item 1 is the primary image.
    public var items: [Item] = []
    /// (type, from, to) with item IDs.
    public var references: [(String, Int, [Int])] = []

    public init() {}

    /// The picture `heif-enc` makes of `jpeg` (with no EXIF): its file holds that one image, whose data is all of `mdat`.
    public static func picture(of jpeg: String, scratch: String) throws -> Picture {
        let encoded = try StillFixtures.heif(from: jpeg, at: scratch)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: encoded)))
        var found: [String: [UInt8]] = [:]
        func walk(_ range: Range<Int>) {
            var at = range.lowerBound
            while at + 8 <= range.upperBound {
                let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                let type = String(decoding: bytes[at + 4..<at + 8], as: UTF8.self)
                guard size >= 8, at + size <= range.upperBound else { return }
                if found[type] == nil { found[type] = Array(bytes[at..<at + size]) }
                if type == "meta" { walk(at + 12..<at + size) }
                if type == "iprp" || type == "ipco" { walk(at + 8..<at + size) }
                at += size
            }
        }
        walk(0..<bytes.count)
        guard let hvcC = found["hvcC"], let ispe = found["ispe"], let mdat = found["mdat"] else {
            throw ExternalTool.Failure(command: ["heif-enc"], status: 0, standardError: "no hvcC, ispe or mdat in \(encoded)")
        }
        return Picture(hvcC: hvcC, ispe: ispe, data: Array(mdat.dropFirst(8)))
    }

    /// `irot`: `quarters` quarter turns counterclockwise.
    public static func irot(_ quarters: Int) -> [UInt8] { box("irot", [UInt8(quarters & 3)]) }
    /// `imir`: axis 0 flips top and bottom, 1 left and right (as libheif and Pillow read it).
    public static func imir(_ axis: Int) -> [UInt8] { box("imir", [UInt8(axis & 1)]) }
    /// `auxC`: what an auxiliary image is ("urn:mpeg:hevc:2015:auxid:1" is alpha).
    public static func auxC(_ urn: String) -> [UInt8] { fullBox("auxC", Array(urn.utf8) + [0]) }

    /// An `Exif` item's data: a TIFF header with one IFD holding Orientation.
    public static func exif(orientation: Int) -> [UInt8] {
        [0, 0, 0, 0] + Array("MM".utf8) + [0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0,
                                         0, 0, 0, 0]
    }

    /// ftyp, mdat (every item's data), then meta, whose `iloc` points into the mdat written before it.
    public func write(to path: String) throws {
        let ftyp = Self.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        var mdatBody: [UInt8] = [], locations: [UInt8] = Self.u16(items.count)
        for (index, item) in items.enumerated() {
            let offset = ftyp.count + 8 + mdatBody.count
            locations += Self.u16(index + 1) + Self.u16(0) + Self.u16(1) + Self.u32(offset) + Self.u32(item.data.count)
            mdatBody += item.data
        }
        let iloc = Self.fullBox("iloc", [0x44, 0x00] + locations)
        var infos = Self.u16(items.count)
        for (index, item) in items.enumerated() {
            infos += Self.fullBox("infe", Self.u16(index + 1) + Self.u16(0) + Array(item.type.utf8) + [0], version: 2,
                                  flags: item.hidden ? 1 : 0)
        }
        var properties: [[UInt8]] = [], associations = Self.u32(items.count)
        for (index, item) in items.enumerated() {
            associations += Self.u16(index + 1) + [UInt8(item.properties.count)]
            for property in item.properties {
                properties.append(property)
                associations.append(UInt8(properties.count) | 0x80)
            }
        }
        let iprp = Self.box("iprp", Self.box("ipco", properties.flatMap { $0 }) + Self.fullBox("ipma", associations))
        var meta = Self.fullBox("hdlr", Self.u32(0) + Array("pict".utf8) + Self.u32(0) + Self.u32(0) + Self.u32(0) + [0])
            + Self.fullBox("pitm", Self.u16(1)) + iloc + Self.fullBox("iinf", infos)
        if !references.isEmpty {
            meta += Self.fullBox("iref", references.flatMap { type, from, to in
                Self.box(type, Self.u16(from) + Self.u16(to.count) + to.flatMap(Self.u16))
            })
        }
        meta += iprp
        let file = ftyp + Self.box("mdat", mdatBody) + Self.fullBox("meta", meta)
        try Data(file).write(to: URL(fileURLWithPath: path))
    }

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { u32(body.count + 8) + Array(type.utf8) + body }
    static func fullBox(_ type: String, _ body: [UInt8], version: UInt8 = 0, flags: UInt8 = 0) -> [UInt8] {
        box(type, [version, 0, 0, flags] + body)
    }
    static func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func u32(_ value: Int) -> [UInt8] { u16(value >> 16) + u16(value & 0xFFFF) }
}

/// Pictures as Pillow with pillow-heif shows them (the reference HEIF readers: libheif 1.23 inside), from the
/// project's Python tools (`scripts/ensure-python-tools`, run here when they are missing).
public enum PillowReference {
    /// Writes `source` as displayed to a PNG at `path`: libheif's transformations, and for AVIF the EXIF orientation
    /// Pillow's own AVIF reader turns them into; alpha laid over white.
    public static func render(_ source: String, to path: String) throws -> String {
        let python = ExternalTool.packageRoot + "/.build/python-tools/bin/python"
        if !FileManager.default.isExecutableFile(atPath: python) || !hasPillowHeif(python) {
            try ExternalTool.run([ExternalTool.packageRoot + "/scripts/ensure-python-tools"])
        }
        let script = """
        import sys
        from PIL import Image
        import pillow_heif
        pillow_heif.register_heif_opener()
        Image.MAX_IMAGE_PIXELS = None
        image = Image.open(sys.argv[1])
        exif = Image.Exif()  # the EXIF block alone: getexif() would add an XMP orientation, no HEIF transformation
        exif.load(image.info.get("exif") or b"")
        turn = {2: [0], 3: [3], 4: [1], 5: [5], 6: [4], 7: [6], 8: [2]}.get(exif.get(0x0112, 1), [])
        for method in turn: image = image.transpose(Image.Transpose(method))
        image = image.convert("RGBA")
        flat = Image.new("RGBA", image.size, (255, 255, 255, 255))
        flat.alpha_composite(image)
        flat.convert("RGB").save(sys.argv[2])
        """
        try ExternalTool.run([python, "-c", script, source, path])
        return path
    }

    private static func hasPillowHeif(_ python: String) -> Bool {
        (try? ExternalTool.run([python, "-c", "import pillow_heif"])) != nil
    }
}
