import CairnTesting
import Foundation
import Testing

@Suite struct VersionCommandTests {
    /// The verbose form names the libraries as they report themselves, the same as their own tools say.
    @Test func theVerboseVersionNamesTheLibrariesAsTheirOwnToolsDo() throws {
        let short = try CairnBinary.run(["--version"])
        #expect(short.status == 0 && !short.standardOutput.isEmpty)
        let verbose = try CairnBinary.run(["version", "--verbose"])
        #expect(verbose.status == 0, "\(verbose.standardError)")
        var versions: [String: String] = [:]
        for line in verbose.standardOutput.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { versions[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        #expect(versions["cairn"] == short.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        let sqlite = String(decoding: try ExternalTool.run(["sqlite3", "--version"]), as: UTF8.self)
        #expect(sqlite.hasPrefix(try #require(versions["SQLite"]) + " "), "\(sqlite)")
        let ffmpeg = String(decoding: try ExternalTool.run(["ffmpeg", "-version"]), as: UTF8.self)
        #expect(ffmpeg.hasPrefix("ffmpeg version " + (try #require(versions["FFmpeg"])) + " "), "\(ffmpeg.prefix(80))")
        for library in ["OpenSSL", "libheif", "LibRaw", "libwebp", "libjxl", "lcms2", "libtiff"] {
            #expect(versions[library]?.first?.isNumber == true || versions[library]?.hasPrefix("OpenSSL ") == true,
                    "\(library): \(versions[library] ?? "missing")")
        }
    }
}
