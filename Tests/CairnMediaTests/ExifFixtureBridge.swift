import CairnTesting

/// Builds JPEG header bytes carrying a fixture's EXIF, without touching disk.
enum CairnTestingExif {
    static func fields() -> ExifFields { ExifFields() }

    static func jpegHeader(_ fields: ExifFields) -> [UInt8] {
        let tiff = fields.tiffBytes()
        let length = tiff.count + 8
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + Array("Exif".utf8) + [0, 0] + tiff
            + [0xFF, 0xC0, 0, 17, 8, 0x0B, 0xB8, 0x0F, 0xA0, 3]  // SOF0: 4000x3000
    }
}
