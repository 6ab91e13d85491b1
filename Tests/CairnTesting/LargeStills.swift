import Foundation

/// The large files a memory budget is about, made once per build folder (about a minute) and kept under
/// `.build/test-fixtures`: a 20 MP 10-bit 4:2:2 AVIF, a 20 MP HEIC, a 20 MP 16-bit TIFF, a 20 MP JPEG XL, a 20 MP
/// 4:4:4 JPEG, a 67 MP JPEG and a 4K video, all made from noise so the encoders work as on photos.
public enum LargeStills {
    public static let names = ["jpeg-444.jpg", "jpeg-67mp.jpg", "avif-10bit-422.avif", "heic-8bit.heic",
                               "tiff-16bit.tif", "jxl-lossy.jxl", "video-4k.mp4"]

    /// The folder holding every file of `names`, made the first time it is asked for.
    public static func folder() throws -> String {
        try made.get()
    }

    private static let made: Result<String, any Error> = Result { try make() }

    private static func make() throws -> String {
        let folder = ExternalTool.packageRoot + "/.build/test-fixtures/large-stills-2"
        let manager = FileManager.default
        if names.allSatisfy({ manager.fileExists(atPath: folder + "/" + $0) }) { return folder }
        let scratch = folder + ".partial"
        try? manager.removeItem(atPath: scratch)
        try manager.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let source = scratch + "/source.png"
        try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "mandelbrot=size=5472x3648:maxiter=40,noise=alls=20:allf=t",
                                 "-frames:v", "1", "-pix_fmt", "rgb48be", source])
        try ExternalTool.ffmpeg(["-i", source, "-pix_fmt", "yuvj444p", "-q:v", "3", scratch + "/jpeg-444.jpg"])
        try ExternalTool.run(["vips", "resize", scratch + "/jpeg-444.jpg", scratch + "/jpeg-67mp.jpg[Q=85]", "1.8275"])
        // heif-enc writes 10 bits only from a 16-bit PNG; libaom encodes 4:2:2 at 10 bits as cameras write it (at
        // its fastest: the decode, not the file's size, is what is measured).
        try ExternalTool.run(["heif-enc", "-A", "-b", "10", "-q", "90", "-p", "chroma=422", "-p", "speed=9", source,
                              "-o", scratch + "/avif-10bit-422.avif"])
        try ExternalTool.run(["heif-enc", "-q", "90", scratch + "/jpeg-444.jpg", "-o", scratch + "/heic-8bit.heic"])
        try ExternalTool.ffmpeg(["-i", source, "-pix_fmt", "rgb48le", scratch + "/tiff-16bit.tif"])
        try ExternalTool.ffmpeg(["-i", scratch + "/jpeg-444.jpg", "-c:v", "libjxl", "-distance", "1",
                                 scratch + "/jxl-lossy.jxl"])
        try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=3840x2160:rate=30,noise=alls=10:allf=t", "-t", "3",
                                 "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                                 scratch + "/video-4k.mp4"])
        try manager.removeItem(atPath: source)
        try? manager.removeItem(atPath: folder)
        try manager.moveItem(atPath: scratch, toPath: folder)
        return folder
    }

    /// A 64x48 file in `folder` of the same format as the fixture `name` (its extension, and for HEIF/AVIF its codec),
    /// made as the fixture was: the same command on it loads the same libraries and sets up the same buffers.
    public static func tiny(like name: String, in folder: String) throws -> String {
        let fileExtension = (name as NSString).pathExtension
        let path = folder + "/tiny." + fileExtension
        if FileManager.default.fileExists(atPath: path) { return path }
        let png = folder + "/tiny-source.png"
        if !FileManager.default.fileExists(atPath: png) {
            try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", png])
        }
        switch fileExtension {
        case "jpg": try ExternalTool.ffmpeg(["-i", png, "-pix_fmt", "yuvj444p", "-q:v", "3", path])
        case "avif": try ExternalTool.run(["heif-enc", "-A", "-q", "90", "-p", "speed=9", png, "-o", path])
        case "heic": try ExternalTool.run(["heif-enc", "-q", "90", png, "-o", path])
        case "tif": try ExternalTool.ffmpeg(["-i", png, "-pix_fmt", "rgb48le", path])
        case "jxl": try ExternalTool.ffmpeg(["-i", png, "-c:v", "libjxl", "-distance", "1", path])
        case "mp4":
            try ExternalTool.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=30", "-t", "1", "-c:v", "libx264",
                                     "-pix_fmt", "yuv420p", path])
        default: throw ExternalTool.Failure(command: ["tiny", name], status: -1, standardError: "no tiny \(fileExtension)")
        }
        return path
    }

    /// The most memory `arguments` (run as a child process) held at once, in bytes: its peak resident set, as the
    /// kernel counts it for a reaped child (read by Python's `resource`, so no Swift runtime stands in between).
    public static func peakResidentBytes(of arguments: [String]) throws -> Int64 {
        let script = """
            import resource, subprocess, sys
            done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let output = String(decoding: try ExternalTool.run(["python3", "-c", script] + arguments), as: UTF8.self)
        let fields = output.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, fields[0] == "0", let kibibytes = Int64(fields[1]) else {
            throw ExternalTool.Failure(command: arguments, status: Int32(fields.first.flatMap { Int32($0) } ?? -1),
                                       standardError: output)
        }
        return kibibytes << 10
    }
}
