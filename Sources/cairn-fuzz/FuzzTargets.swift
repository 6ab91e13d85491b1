import CairnCore
import CairnMedia
import Foundation

// libFuzzer harnesses over cairn's entry points for untrusted bytes, and a replay command for their findings.
// Built for fuzzing by scripts/fuzz (-sanitize=fuzzer,address -DFUZZING: libFuzzer supplies main); built plainly,
// `cairn-fuzz TARGET FILE...` runs files through the same code, which is how the regression test replays them.

/// One input through one entry point. A thrown error is a fine answer; only a crash or a sanitizer report is a finding.
enum FuzzTarget: String, CaseIterable {
    /// The bytes as a JPEG's EXIF segment (and as a bare TIFF): cairn's own EXIF and header parsers.
    case exif
    /// The bytes as a file, probed: container sniffing, FFmpeg, libheif, LibRaw, libjxl, libtiff, libwebp headers.
    case probe
    /// The bytes as a file, decoded and thumbnailed: every still decoder and the scaler.
    case thumbnail

    func run(_ bytes: [UInt8], scratch: String) {
        let engine = MediaEngine()
        switch self {
        case .exif:
            let payload = Array(bytes.prefix(65_000))
            let length = payload.count + 8
            var jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)]
            jpeg += Array("Exif".utf8) + [0, 0] + payload
            // A baseline 8x8 grey frame header, so the probe reads the whole header path.
            jpeg += [0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00, 0x08, 0x00, 0x08, 0x01, 0x01, 0x11, 0x00, 0xFF, 0xD9]
            _ = try? engine.probe(path: write(jpeg, to: scratch + "/exif.jpg"))
            _ = try? engine.probe(path: write(bytes, to: scratch + "/exif.tif"))
        case .probe:
            _ = try? engine.probe(path: write(bytes, to: scratch + "/input" + Self.fileExtension(bytes)))
        case .thumbnail:
            let path = write(bytes, to: scratch + "/input" + Self.fileExtension(bytes))
            let kind: MediaKind = bytes.count > 8 && Array(bytes[4..<8]) == Array("ftyp".utf8)
                && !["heic", "heix", "mif1", "avif"].contains(String(decoding: bytes[8..<min(12, bytes.count)], as: UTF8.self))
                ? .video : .photo
            _ = try? engine.renderThumbnail(source: path, kind: kind, to: scratch + "/thumb.webp")
        }
    }

    /// Camera RAWs are told apart by their names: TIFF-like bytes are tried as one, the rest keep no extension.
    static func fileExtension(_ bytes: [UInt8]) -> String {
        guard bytes.count >= 4 else { return ".bin" }
        if bytes[0] == 0x49 && bytes[1] == 0x49 || bytes[0] == 0x4D && bytes[1] == 0x4D { return ".cr2" }
        return ".bin"
    }

    private func write(_ bytes: [UInt8], to path: String) -> String {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }
}

/// A scratch folder per process, for the files an input becomes.
let fuzzScratch: String = {
    let path = NSTemporaryDirectory() + "cairn-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()

#if FUZZING
/// The target comes from CAIRN_FUZZ_TARGET (exif, probe, thumbnail).
let fuzzTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["CAIRN_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget(rawValue: name) else {
        fatalError("set CAIRN_FUZZ_TARGET to one of \(FuzzTarget.allCases.map(\.rawValue))")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    fuzzTarget.run(bytes, scratch: fuzzScratch)
    return 0
}

// SwiftPM links an executable's entry point as main, so libFuzzer's own main is left out: run its driver here.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<CInt>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

@main
struct FuzzDriver {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
    }
}
#else
@main
struct FuzzReplay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            FileHandle.standardError.write(Data("usage: cairn-fuzz exif|probe|thumbnail FILE...\n".utf8))
            exit(64)
        }
        for file in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cairn-fuzz: \(file): cannot be read\n".utf8))
                exit(66)
            }
            target.run([UInt8](data), scratch: fuzzScratch)
        }
        try? FileManager.default.removeItem(atPath: fuzzScratch)
        print("cairn-fuzz: \(arguments.count - 1) inputs through \(name), no crash")
    }
}
#endif
