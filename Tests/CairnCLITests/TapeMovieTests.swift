import CairnTesting
import Foundation
import Glibc
import Testing

/// A tape's single file, `tape.mp4`, as a browser plays it: headless Chromium loads it over HTTP on loopback, its
/// `<video>` element plays past 3 s (across the first clip's end), and ffprobe reads the length the tape has.
@Suite struct TapeMovieTests {
    /// Plays the video muted, pauses once it passes 3 s and writes where it got to into the page.
    static let page = """
        <!doctype html><html><body style="margin:0;background:#000">
        <video id="v" src="tape.mp4" muted playsinline width="960" height="540"></video>
        <p id="state" style="color:#fff">loading</p>
        <script>
        const video = document.getElementById('v'), state = document.getElementById('state');
        video.addEventListener('error', () => { state.textContent = 'error ' + (video.error && video.error.code); });
        video.addEventListener('timeupdate', () => {
          if (video.currentTime >= 3 && !state.dataset.done) {
            state.dataset.done = 1;
            video.pause();
            state.textContent = 'reached ' + video.currentTime.toFixed(2) + ' of ' + video.duration.toFixed(2);
          }
        });
        video.play().catch(e => { state.textContent = 'play failed ' + e; });
        </script>
        <img src="/wait?seconds=6" alt="">
        </body></html>
        """

    /// A file server on loopback whose `/wait?seconds=N` answers after N seconds: the page's load event (after
    /// which headless Chromium dumps or shoots it) waits for it while the video plays in real time.
    static let server = """
        import http.server, os, sys, time
        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/wait"):
                    time.sleep(float(self.path.split("=")[1]))
                    self.send_response(204)
                    self.end_headers()
                    return
                try:
                    super().do_GET()
                except ConnectionError:
                    pass
            def log_message(self, *arguments):
                pass
        os.chdir(sys.argv[1])
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    @Test func theSingleFilePlaysInChromiumForTheTapesLength() throws {
        let (folder, root) = try TapeCommandTests.library()
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        let build = try CairnBinary.run(["tape", "build", "movie", "--library", root, "--quiet"])
        #expect(build.status == 0, "\(build.standardError)")
        let tapeFolder = root + "/tapes/movie"
        let manifest = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: tapeFolder + "/tape.json"))) as? [String: Any])
        let clips = try #require(manifest["clips"] as? [[String: Any]])
        let expected = clips.flatMap { $0["segmentDurations"] as? [Double] ?? [] }.reduce(0, +)
        #expect(abs(expected - 9) < 0.2, "\(expected) s listed")
        #expect(abs(try TapeCommandTests.seconds(ofMedia: tapeFolder + "/tape.mp4") - expected) < 0.15)

        try Self.page.write(toFile: tapeFolder + "/play.html", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = ["python3", "-c", Self.server, tapeFolder]
        let announced = Pipe()
        server.standardOutput = announced
        server.standardError = FileHandle.nullDevice
        try server.run()
        // SIGKILL: a child of the test runner may inherit SIGTERM ignored.
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = announced.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let port = try #require(Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        let url = "http://127.0.0.1:\(port)/play.html"

        let dom = try Self.chromium(["--dump-dom", url])
        let state = try #require(dom.range(of: #"reached [0-9.]+ of [0-9.]+"#, options: .regularExpression).map { dom[$0] },
                                 "the video did not reach 3 s: \(dom)")
        let numbers = state.split(separator: " ").compactMap { Double($0) }
        #expect(numbers.count == 2 && numbers[0] >= 3 && abs(numbers[1] - expected) < 0.2, "\(state)")
        let screenshot = OperationsTests.artifact("tape-movie.png")
        try? FileManager.default.removeItem(atPath: screenshot)
        _ = try Self.chromium(["--screenshot=\(screenshot)", "--window-size=960,600", url])
        let shot = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(shot.starts(with: [0x89, 0x50, 0x4E, 0x47]) && shot.count > 1_000, "no screenshot")
    }

    /// Headless Chromium with a profile of its own (another suite's Chromium may run at the same time).
    static func chromium(_ arguments: [String]) throws -> String {
        let profile = NSTemporaryDirectory() + "/cairn-chromium-tape-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: profile) }
        return String(decoding: try ExternalTool.run([
            "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--autoplay-policy=no-user-gesture-required", "--user-data-dir=\(profile)",
        ] + arguments), as: UTF8.self)
    }
}
