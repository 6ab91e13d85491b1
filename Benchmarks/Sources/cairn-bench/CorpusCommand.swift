import ArgumentParser
import CairnCore
import Foundation

/// `cairn-bench corpus`: camera-like media, deterministic from a seed.
struct CorpusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corpus",
        abstract: "Generate a benchmark corpus: 12 MP JPEGs, 1080p H.264 clips, PNGs, or many small files.",
        discussion: """
            Media is made with the ffmpeg CLI (benchmarks may spawn it; cairn itself never does). The same seed \
            always gives the same files. Existing files are kept, so a corpus can be grown.
            """
    )

    @Option(help: "The folder to fill.")
    var out: String

    @Option(help: "How many 4000x3000 camera-like JPEGs (2-5 MB each) to make.")
    var photos = 0

    @Option(help: "How many 1080p H.264 clips of a few seconds, with audio, to make.")
    var videos = 0

    @Option(help: "How many PNG screenshots to make.")
    var pngs = 0

    @Option(name: .customLong("small-files"), help: "How many small (1-16 KB) files with media extensions to make, for rescan benchmarks.")
    var smallFiles = 0

    @Option(help: "The seed every file derives from.")
    var seed: UInt64 = 1

    @Option(help: "How many ffmpeg processes to run at once.")
    var jobs = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        guard photos >= 0, videos >= 0, pngs >= 0, (0...1_000_000).contains(smallFiles) else {
            throw ValidationError("Counts must be zero or more (small files at most 1,000,000).")
        }
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var commands: [(String, [String])] = []
        for index in 0..<photos {
            let s = seed &* 1000 &+ UInt64(index)
            let noise = 8 + Int(s % 7)
            let path = "\(out)/DCIM/\(100 + index / 500)CAMERA/IMG_\(String(format: "%05d", index)).JPG"
            commands.append((path, ["-f", "lavfi", "-i",
                "gradients=s=2000x1500:seed=\(s % 100_000):speed=0.01,format=yuv420p,noise=alls=\(noise):all_seed=\(s % 100_000),scale=4000x3000:flags=bicubic",
                "-frames:v", "1", "-q:v", "2", path]))
        }
        for index in 0..<videos {
            let s = seed &* 1000 &+ UInt64(index)
            let path = "\(out)/Videos/VID_\(String(format: "%05d", index)).mp4"
            commands.append((path, ["-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=30", "-f", "lavfi", "-i", "sine=f=\(200 + s % 800)",
                "-t", "\(2 + s % 3)", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path]))
        }
        for index in 0..<pngs {
            let path = "\(out)/Screenshots/Screenshot_\(String(format: "%05d", index)).png"
            commands.append((path, ["-f", "lavfi", "-i", "testsrc2=s=1170x2532:r=1", "-frames:v", "1", path]))
        }
        let pending = commands.filter { !FileManager.default.fileExists(atPath: $0.0) }
        for (path, _) in pending {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        }
        let failed = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: pending.count) { index in
            let (path, arguments) = pending[index]
            do { try Peers.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y"] + arguments) } catch {
                failed.withLock { $0.append("\(path): \(error)") }
            }
        }
        let failures = failed.withLock { $0 }
        guard failures.isEmpty else { throw ValidationError(failures.joined(separator: "\n")) }
        if smallFiles > 0 { try makeSmallFiles() }
        print("corpus at \(out): \(Peers.files(in: out).count) files, \(Peers.totalBytes(Peers.files(in: out)) / 1_000_000) MB")
    }

    /// Small files with a JPEG header and seeded bytes, 1,000 to a folder like a phone's DCIM.
    private func makeSmallFiles() throws {
        var generator = SeededGenerator(seed: seed)
        for index in 0..<smallFiles {
            let folder = "\(out)/small/\(String(format: "%03d", index / 1000))"
            if index % 1000 == 0 { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            let path = "\(folder)/IMG_\(String(format: "%06d", index)).jpg"
            if FileManager.default.fileExists(atPath: path) { continue }
            let size = 1024 + Int(generator.next() % 15_360)
            var bytes = [UInt8](repeating: 0, count: size)
            bytes[0] = 0xFF; bytes[1] = 0xD8; bytes[2] = 0xFF; bytes[3] = 0xE0
            for offset in stride(from: 4, to: size, by: 8) {
                var word = generator.next()
                for byte in offset..<min(offset + 8, size) { bytes[byte] = UInt8(truncatingIfNeeded: word); word >>= 8 }
            }
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        }
    }
}

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
