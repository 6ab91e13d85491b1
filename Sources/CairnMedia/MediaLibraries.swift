import CFFmpeg
import CHeif
import CJXL
import CLCMS2
import CLibRaw
import CTIFF
import CWebP

/// The media libraries cairn runs with, each as it reports its own version at run time (which may differ from the
/// headers cairn was built with): for `cairn version --verbose` and bug reports.
public enum MediaLibraries {
    public static var versions: [(name: String, version: String)] {
        [
            ("FFmpeg", String(cString: av_version_info())),
            ("libheif", String(cString: heif_get_version())),
            ("LibRaw", String(cString: libraw_version())),
            ("libwebp", packed(WebPGetDecoderVersion(), base: 256)),
            ("libjxl", packed(Int32(truncatingIfNeeded: JxlDecoderVersion()), base: 1000)),
            ("lcms2", lcms(cmsGetEncodedCMMversion())),
            ("libtiff", tiff(String(cString: TIFFGetVersion()))),
        ]
    }

    /// major·base² + minor·base + patch, as libwebp (base 256) and libjxl (base 1000) encode theirs.
    private static func packed(_ value: Int32, base: Int32) -> String {
        "\(value / (base * base)).\(value / base % base).\(value % base)"
    }

    /// lcms2 encodes 2.14 as 2140.
    private static func lcms(_ value: Int32) -> String { "\(value / 1000).\(value % 1000 / 10)" }

    /// "LIBTIFF, Version 4.5.0\nCopyright …": the number.
    private static func tiff(_ text: String) -> String {
        let first = text.split(separator: "\n").first.map(String.init) ?? text
        return first.components(separatedBy: "Version ").last ?? first
    }
}
