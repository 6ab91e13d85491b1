import CairnCore
import CairnTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `cairn serve`'s live side: `/events` (Server-Sent Events from the run logs), the page that follows it in headless
/// Chromium (chromedriver driven by Selenium), and what guards both: the token's sign-in cookie, the Host check, the
/// Content-Security-Policy, names and reasons as text.
@Suite(.serialized) struct LivePageTests {
    /// A run log as an earlier run left it: one failure whose file name and reason are markup.
    static let markupFile = "<img src=x onerror=alert(1)>.jpg"
    static let markupReason = "cannot decode: <b>bold</b> <script>alert(2)</script>"

    static func writeEarlierRun(into library: String) throws {
        let runID = "20200101T000000Z-1"
        let lines = [
            #"{"command":"import","event":"runStart","runId":"\#(runID)","seq":1,"time":"2020-01-01T00:00:00.000Z"}"#,
            try jsonLine(["event": "error", "runId": runID, "seq": 2, "time": "2020-01-01T00:00:01.000Z", "phase": "importing",
                          "file": "earlier/" + markupFile, "message": markupReason, "category": "corrupt"]),
            #"{"counts":{"failed":1,"ready":0},"event":"runEnd","outcome":"someFailed","status":"failed","runId":"\#(runID)","seq":3,"time":"2020-01-01T00:00:02.000Z","durationSeconds":2}"#,
        ]
        try FileManager.default.createDirectory(atPath: library + "/runs", withIntermediateDirectories: true)
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: library + "/runs/\(runID).ndjson"))
    }

    static func jsonLine(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    /// The events a `curl -N` of `/events` wrote to its log: each frame's id and its data's `event` and `seq`.
    static func frames(in text: String) -> [(id: String, event: String, seq: Int)] {
        text.components(separatedBy: "\n\n").compactMap { frame in
            var id: String?, data: String?
            for line in frame.split(separator: "\n") {
                if line.hasPrefix("id: ") { id = String(line.dropFirst(4)) }
                if line.hasPrefix("data: ") { data = String(line.dropFirst(6)) }
            }
            guard let id, let data, let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any],
                  let event = object["event"] as? String, let seq = object["seq"] as? Int else { return nil }
            return (id, event, seq)
        }
    }

    static func startServer(_ library: String, folder: TemporaryDirectory, extra: [String] = []) throws -> (ServiceProcess, String) {
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", library, "--listen", "127.0.0.1:0"] + extra,
                                        logPath: folder.subpath("serve.log"))
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        return (server, base)
    }

    @Test func thePageFollowsAnImportInChromiumWithoutReloadingAfterSigningIn() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 300)
        try folder.write(Data("not a picture at all".utf8), to: "src/" + Self.markupFile)
        let library = folder.subpath("lib")
        // A library with one earlier run, whose log is the one above.
        try folder.write(try DistinctJPEG.data(byteCount: 3000, seed: 7), to: "first/one.jpg")
        #expect(try CairnBinary.run(["import", folder.subpath("first"), "--library", library, "--quiet"]).status == 0)
        try FileManager.default.removeItem(atPath: library + "/runs")
        try Self.writeEarlierRun(into: library)
        let token = try folder.write(Data("live-s3cret\n".utf8), to: "token")
        chmod(token, 0o600)
        let (server, base) = try Self.startServer(library, folder: folder, extra: ["--token-file", token])
        defer { server.stop() }
        #expect(try HTTPProbe.get(base + "/events").status == 401, "the stream is guarded like the page")

        let artifacts = OperationsTests.artifact("")
        let ready = folder.subpath("page-ready")
        let probe = try ServiceProcess(Self.python, [Self.script("live-page-probe"), base, artifacts, "--ready-file", ready,
                                                     "--first-failure", Self.markupFile, "--live-failure", Self.markupFile,
                                                     "--token-file", token], logPath: folder.subpath("probe.log"))
        defer { probe.stop() }
        let deadline = Date().addingTimeInterval(240)
        while !FileManager.default.fileExists(atPath: ready), probe.process.isRunning, Date() < deadline { usleep(20_000) }
        #expect(FileManager.default.fileExists(atPath: ready), "the page showed the earlier run: \(probe.output)")

        // Slowed by the test hook (each file's metadata waits), so the page certainly sees the run in progress.
        let run = try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--quiet"],
                                      environment: ["CAIRN_TEST_ITEM_DELAY_MS": "60"])
        #expect(run.status == 3, "the one bad file failed: \(run.standardError)")
        #expect(try probe.waitForExit(timeout: 300) == 0, "\(probe.output)")
        let output = probe.output
        let json = try #require(output.range(of: "{\"signInAsked\"").map { String(output[$0.lowerBound...]) }, "\(output)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        func state(_ key: String) -> [String: Any] { seen[key] as? [String: Any] ?? [:] }
        func int(_ key: String, _ field: String) -> Int { (state(key)[field] as? NSNumber)?.intValue ?? -1 }

        #expect(seen["signInAsked"] as? Bool == true, "the page asked for the token before showing anything")
        let earlier = (state("earlier")["failures"] as? [String]) ?? []
        #expect(earlier.contains { $0.contains(Self.markupFile) && $0.contains(Self.markupReason) },
                "the earlier run's file and reason, as text: \(earlier)")
        for key in ["earlier", "first", "second", "end"] {
            #expect(int(key, "injected") == 0, "no markup from a name or reason became an element (\(key))")
        }
        #expect(seen["alert"] is NSNull, "no script from a name or reason ran")
        #expect((seen["reloads"] as? [String]) == ["loaded once", "loaded once", "loaded once"], "the page never reloaded")
        #expect(int("second", "completed") > int("first", "completed"), "the bar advanced: \(state("first")) → \(state("second"))")
        #expect(int("second", "ready") >= int("first", "ready"))
        #expect(int("second", "feed") >= int("first", "feed") && int("first", "feed") > 0, "the feed has the run's events")
        #expect((state("first")["lanes"] as? Int ?? 0) > 0, "the lanes are shown while they run")
        let holding = [state("first"), state("second")].compactMap { $0["holding"] as? String }.joined(separator: " ")
        #expect(holding.contains("IMG_"), "the lanes say which files they hold: \(holding)")
        #expect(seen["failureBeforeEnd"] as? Bool == true, "the failing file was listed before the run ended")
        #expect((state("end")["headline"] as? String)?.hasPrefix("Import finished; some files failed") == true,
                "the end's headline: \(state("end")["headline"] ?? "")")
        #expect((seen["record"] as? String)?.hasPrefix("Last run 20") == true, "the record below took the run in without a reload")
        let status = try CairnBinary.run(["status", "--json", "--library", library]).standardOutput
        let lastRun = try #require((try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any])?["lastRun"] as? [String: Any])
        let counts = try #require(lastRun["counts"] as? [String: Any])
        #expect(int("end", "ready") == (counts["ready"] as? Int) && int("end", "ready") == 300,
                "the page's count is the run's summary's: \(counts)")
        #expect(int("end", "failed") == (counts["failed"] as? Int) && int("end", "failed") == 1)
        #expect(int("end", "thumbnails") > 0, "thumbnails appeared as items were imported")
        for name in ["live-page-1.png", "live-page-2.png", "live-page-end.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: artifacts + name)[.size] as? Int) ?? 0
            #expect(size > 10_000, "screenshot \(name) kept")
        }
    }

    @Test func aClientThatReconnectsWithLastEventIDGetsEveryEventOfTheRunOnce() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 80)
        let library = folder.subpath("lib")
        #expect(try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--quiet", "--clips", "off"]).status == 0)
        let previous = try #require(try FileManager.default.contentsOfDirectory(atPath: library + "/runs").first).prefix { $0 != "." }
        for index in 0..<80 { try folder.write(try DistinctJPEG.data(byteCount: 3000, seed: UInt8(index % 251)) + Data("n\(index)".utf8), to: "src/new/N\(index).jpg") }
        let (server, base) = try Self.startServer(library, folder: folder)
        defer { server.stop() }

        let importing = try ServiceProcess(CairnBinary.path, ["import", folder.subpath("src"), "--library", library, "--quiet",
                                                              "--clips", "off"],
                                           environment: ["CAIRN_TEST_ITEM_DELAY_MS": "150"], logPath: folder.subpath("import.log"))
        // A client that connects once the new run imports (its lanes are slowed by the test hook): it gets the run from
        // its first event, then drops off.
        let firstLog = folder.subpath("first.sse")
        var first: ServiceProcess? = try ServiceProcess("curl", ["-s", "-N", base + "/events"], logPath: firstLog)
        try first?.waitForOutput(matching: "\"event\":\"progress\"[^\\n]*\"phase\":\"importing\"[^\\n]*\"runId\":\"(?!\(previous))",
                                 timeout: 120)
        // The run holds still (SIGSTOP) while the first client leaves, so it certainly leaves mid-run.
        importing.send(SIGSTOP)
        // A client that goes away (curl may start with SIGTERM ignored under the test runner).
        first?.send(SIGKILL)
        first?.stop()
        first = nil
        let heard = Self.frames(in: (try? String(contentsOfFile: firstLog, encoding: .utf8)) ?? "")
        let newest = try #require(heard.last)
        let runID = String(newest.id.split(separator: "/").first ?? "")
        #expect(runID != previous)
        let before = heard.filter { $0.id.hasPrefix(runID + "/") }
        #expect(newest.event != "runEnd", "the first client left mid-run")

        let second = try ServiceProcess("curl", ["-s", "-N", "-H", "Last-Event-ID: \(newest.id)", base + "/events"],
                                        logPath: folder.subpath("second.sse"))
        defer { second.send(SIGKILL); second.stop() }
        importing.send(SIGCONT)
        try second.waitForOutput(matching: "\"event\":\"runEnd\",\"outcome\":\"[a-zA-Z]+\",\"runId\":\"\(runID)\"", timeout: 180)
        #expect(try importing.waitForExit(timeout: 180) == 0, "\(importing.output)")
        let after = Self.frames(in: second.output)

        let received = (before + after).map(\.seq)
        let log = try String(contentsOfFile: library + "/runs/\(runID).ndjson", encoding: .utf8)
        let logged = log.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["seq"] as? Int
        }
        #expect(!logged.isEmpty && received == logged, "every event of the run exactly once, in order: \(received.count) received, \(logged.count) logged")
        #expect(before.first?.seq == 1 && before.first?.id == "\(runID)/1", "a client that connects mid-run gets the run so far")
        #expect(after.first?.seq == newest.seq + 1, "the reconnect resumed right after the last event it had")
    }

    @Test func theServerAnswersOnlyToThisMachineByNameAndSignsABrowserInWithACookie() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 1)
        let library = folder.subpath("lib")
        #expect(try CairnBinary.run(["import", folder.subpath("src"), "--library", library, "--quiet"]).status == 0)
        let token = try folder.write(Data("cookie-s3cret\n".utf8), to: "token")
        chmod(token, 0o600)
        let (server, base) = try Self.startServer(library, folder: folder, extra: ["--token-file", token])
        defer { server.stop() }
        let bearer = "Authorization: Bearer cookie-s3cret"
        #expect(try HTTPProbe.get(base + "/", headers: [bearer, "Host: rebound.example.com"]).status == 421,
                "a name that is not this machine's (DNS rebinding) is refused")
        #expect(try HTTPProbe.get(base + "/", headers: [bearer, "Host: localhost:1"]).status == 200)
        // A browser that asks for the page gets the sign-in form; a script gets 401.
        let form = try HTTPProbe.get(base + "/", headers: ["Accept: text/html"])
        #expect(form.status == 401 && form.body.contains("<form method=\"post\" action=\"signin\">"))
        #expect(try HTTPProbe.get(base + "/events").status == 401)
        #expect(try HTTPProbe.get(base + "/live.js").status == 401)
        #expect(try HTTPProbe.get(base + "/tapes/any/playlist.m3u8").status == 401, "a tape's files are guarded too")
        #expect(try HTTPProbe.get(base + "/queue.json").status == 401)
        // ?token= once: a cookie, and the token leaves the address bar.
        let headers = String(decoding: try ExternalTool.run(["curl", "-s", "-D", "-", "-o", "/dev/null", base + "/?token=cookie-s3cret"]),
                             as: UTF8.self)
        #expect(headers.hasPrefix("HTTP/1.1 303"))
        let setCookie = try #require(headers.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") })
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"), "\(setCookie)")
        #expect(headers.lowercased().contains("location: /\r\n"))
        let cookie = "Cookie: " + String(setCookie.dropFirst("set-cookie: ".count).prefix { $0 != ";" })
        let page = try ExternalTool.run(["curl", "-s", "-D", "-", "-H", cookie, base + "/"])
        let text = String(decoding: page, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200"))
        #expect(text.contains("Content-Security-Policy: default-src 'none'; script-src 'self';"), "only the server's own script runs")
        #expect(text.contains("<script src=\"live.js\" defer></script>") && !text.contains("<script>"), "no inline script")
        #expect(text.contains("<noscript><meta http-equiv=\"refresh\""), "the reload only without JavaScript")
        #expect(try HTTPProbe.get(base + "/live.js", headers: [cookie]).body.contains("new EventSource('events')"))
        #expect(try HTTPProbe.get(base + "/?token=wrong", headers: ["Accept: text/html"]).status == 401)
        // The form posts the token and gets the same cookie.
        let posted = String(decoding: try ExternalTool.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "--data-urlencode",
                                                            "token=cookie-s3cret", base + "/signin"]), as: UTF8.self)
        #expect(posted.hasPrefix("HTTP/1.1 303") && posted.contains("HttpOnly"))
        #expect(!server.output.contains("s3cret"), "the token is never printed")
    }

    /// A tape build is a run on the page too: its clips in the bar and the feed, the clip left out among the
    /// failures, and a player that holds the tape (its HLS through Media Source Extensions) before the build ends.
    /// Async, its waits on the blocking pool: the suite's cooperative threads stay free for the tests beside it.
    @Test func aTapeBuildIsFollowedAndItsPlayerHoldsTheTapeBeforeTheBuildEnds() async throws {
        let (folder, root) = try await BlockingPool.run { try TapeCommandTests.library() }
        defer { withExtendedLifetime(folder) {} }  // its deinit removes the library
        // The library's copy of b.mp4 loses its second half: its clip is left out.
        let asset = try await BlockingPool.run { try CairnBinary.run(["asset", "b.mp4", "--library", root, "--json"]) }
        let original = try #require(try TapeCommandTests.events(asset.standardOutput).first?["original"] as? String)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: original))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: original))
        let (server, base) = try await BlockingPool.run { try Self.startServer(root, folder: folder) }
        defer { server.stop() }

        let artifacts = OperationsTests.artifact("")
        let ready = folder.subpath("page-ready")
        let probe = try ServiceProcess(Self.python, [Self.script("live-tape-probe"), base, artifacts, "--ready-file", ready],
                                       logPath: folder.subpath("probe.log"))
        defer { probe.stop() }
        let deadline = Date().addingTimeInterval(240)
        while !FileManager.default.fileExists(atPath: ready), probe.process.isRunning, Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(FileManager.default.fileExists(atPath: ready), "the page opened: \(probe.output)")
        // Slowed by the test hook (each clip waits before it is made), so the build still works on its last clip once
        // the tape is playable.
        let build = try await BlockingPool.run {
            try CairnBinary.run(["tape", "build", "live", "--library", root, "--quiet"], environment: ["CAIRN_TEST_CLIP_DELAY_MS": "2000"])
        }
        #expect(build.status == 3, "b.mp4's clip is left out: \(build.standardError)")
        #expect(try await BlockingPool.run { try probe.waitForExit(timeout: 300) } == 0, "\(probe.output)")
        let output = probe.output
        let json = try #require(output.range(of: "{\"playing\"").map { String(output[$0.lowerBound...]) }, "\(output)")
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let playing = seen["playing"] as? [String: Any] ?? [:], end = seen["end"] as? [String: Any] ?? [:]

        #expect(playing["videoError"] is NSNull && end["videoError"] is NSNull, "\(seen)")
        #expect(playing["runEnded"] as? String == "false", "the player held pictures before the build ended: \(playing)")
        #expect(playing["source"] as? String == "blob", "through Media Source Extensions: \(playing)")
        #expect((playing["headline"] as? String)?.hasPrefix("Building a tape") == true, "\(playing)")
        #expect((playing["ready"] as? Int ?? 0) >= 2, "a tape plays once two clips are ready, and the count says so: \(playing)")
        #expect((end["headline"] as? String)?.hasPrefix("Tape build finished; some files failed") == true, "\(end)")
        #expect(end["ready"] as? Int == 3 && end["failed"] as? Int == 1, "3 clips ready, 1 left out: \(end)")
        #expect(((end["failures"] as? [String]) ?? []).contains { $0.contains("b.mp4") }, "\(end)")
        #expect(((end["feed"] as? [String]) ?? []).contains { $0.hasPrefix("playable") }, "\(end)")
        // Two 3 s stills and the 1 s video.
        let buffered = (end["bufferedSeconds"] as? Double) ?? 0
        #expect(abs(buffered - 7) < 0.5, "the player holds the whole tape: \(buffered) s")
        #expect((seen["reloads"] as? [String]) == ["loaded once", "loaded once"], "the page never reloaded")
        for name in ["live-tape-1.png", "live-tape-end.png"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: artifacts + name)[.size] as? Int) ?? 0
            #expect(size > 10_000, "screenshot \(name) kept")
        }
        // The tape's files are served, with ranges; nothing beside them is.
        let range = String(decoding: try await BlockingPool.run {
            try ExternalTool.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "-H", "Range: bytes=0-99", base + "/tapes/live/tape.mp4"])
        }, as: UTF8.self)
        #expect(range.hasPrefix("HTTP/1.1 206") && range.lowercased().contains("content-length: 100"), "\(range)")
        for path in ["/tapes/../catalog.sqlite", "/tapes/%2e%2e/catalog.sqlite", "/tapes/live/../../catalog.sqlite"] {
            let status = String(decoding: try await BlockingPool.run {
                try ExternalTool.run(["curl", "-s", "--path-as-is", "-o", "/dev/null", "-w", "%{http_code}", base + path])
            }, as: UTF8.self)
            #expect(status == "400" || status == "404", "\(path): \(status)")
        }
    }

    static var python: String { ExternalTool.packageRoot + "/.build/python-tools/bin/python" }

    static func script(_ name: String) -> String { ExternalTool.packageRoot + "/scripts/" + name }
}
