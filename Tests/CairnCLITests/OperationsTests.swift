import CairnTesting
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Operating cairn unattended, with the real parts an operator uses: promtool, node_exporter's textfile collector,
/// a Pushgateway, `cairn serve` read by curl and headless Chromium.
@Suite(.serialized) struct OperationsTests {
    /// Samples by series, its labels in the order cairn writes them (library, source, then the series' own), so
    /// one key reads a file, node_exporter (which sorts labels) and a Pushgateway alike.
    static func metrics(_ text: String) -> [String: Double] {
        let order = ["library", "source"]
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else { values[String(series)] = value; continue }
            let pairs = series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",").map(String.init)
            let sorted = pairs.sorted { a, b in
                let (x, y) = (order.firstIndex(of: String(a.prefix { $0 != "=" })) ?? 9, order.firstIndex(of: String(b.prefix { $0 != "=" })) ?? 9)
                return x != y ? x < y : a < b
            }
            values[String(series[..<brace]) + "{" + sorted.joined(separator: ",") + "}"] = value
        }
        return values
    }

    static func promtoolAccepts(_ text: String) throws {
        _ = try ExternalTool.run(["promtool", "check", "metrics"], input: Data(text.utf8))
    }

    /// Starts `cairn` with `arguments` in the background and waits until its metrics file says a run is in progress;
    /// then stops the process (SIGSTOP), so the test looks at a run that is certainly still going.
    static func pausedRun(_ arguments: [String], metricsFile: String, log: String) throws -> ServiceProcess {
        let run = try ServiceProcess(CairnBinary.path, arguments, logPath: log)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: metricsFile, encoding: .utf8),
               text.contains("cairn_run_in_progress{library=\"lib\",source=\"src\"} 1") {
                run.send(SIGSTOP)
                return run
            }
            usleep(1_000)
        }
        throw ServiceProcess.Failure(description: "no in-progress metrics file: \(run.output)")
    }

    @Test func theMetricsFilePassesPromtoolAndAFailedRunKeepsTheLastSuccess() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 3)
        let file = folder.subpath("cairn.prom")
        let first = try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                         "--metrics-file", file])
        #expect(first.status == 0, "\(first.standardError)")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        try Self.promtoolAccepts(text)
        let after = Self.metrics(text)
        let labels = "library=\"lib\",source=\"src\""
        let success = try #require(after["cairn_last_success_timestamp_seconds{\(labels)}"])
        #expect(success > 0)
        #expect(after["cairn_last_run_outcome{\(labels),outcome=\"success\"}"] == 1)
        #expect(after["cairn_items_total{\(labels),outcome=\"imported\"}"] == 3)
        #expect(after["cairn_run_in_progress{\(labels)}"] == 0)

        // The disk is unmounted: the rails hold every deletion and the run exits 4.
        try FileManager.default.moveItem(atPath: folder.subpath("src"), toPath: folder.subpath("away"))
        let failed = try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                          "--metrics-file", file])
        #expect(failed.status == 4, "\(failed.standardError)")
        let failedText = try String(contentsOfFile: file, encoding: .utf8)
        try Self.promtoolAccepts(failedText)
        let held = Self.metrics(failedText)
        #expect(held["cairn_last_success_timestamp_seconds{\(labels)}"] == success, "kept from the run history")
        #expect(held["cairn_last_run_outcome{\(labels),outcome=\"failed\"}"] == 1)
        #expect(held["cairn_last_run_outcome{\(labels),outcome=\"success\"}"] == 0)
        #expect(held["cairn_failed_runs_in_a_row{\(labels)}"] == 1)
        #expect(held["cairn_source_health{\(labels),state=\"vanished\"}"] == 1)
        #expect((held["cairn_last_run_timestamp_seconds{\(labels)}"] ?? 0) > (after["cairn_last_run_timestamp_seconds{\(labels)}"] ?? 0))
    }

    @Test func aMetricsFileThatCannotBeWrittenIsNamedOnceAndTheRunGoesOn() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 2)
        let file = folder.subpath("no-such-folder/cairn.prom")
        let result = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                          "--metrics-file", file])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.components(separatedBy: "metrics file \(file)").count == 2, "\(result.standardError)")
        #expect(result.standardError.contains("No such file or directory"))
    }

    @Test func nodeExporterServesTheSeriesDuringAndAfterARunAndAnInterruptedRunSaysSo() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 200)
        let textfiles = folder.subpath("textfile")
        try FileManager.default.createDirectory(atPath: textfiles, withIntermediateDirectories: true)
        let port = try ServiceProcess.freePort()
        let exporter = try ServiceProcess("prometheus-node-exporter", [
            "--web.listen-address=127.0.0.1:\(port)", "--collector.disable-defaults", "--collector.textfile",
            "--collector.textfile.directory=\(textfiles)",
        ], logPath: folder.subpath("node-exporter.log"))
        defer { exporter.stop() }
        try exporter.waitForOutput(matching: "Listening on")
        let file = textfiles + "/cairn.prom"
        let labels = "library=\"lib\",source=\"src\""
        func scrape() throws -> [String: Double] {
            let answer = try HTTPProbe.get("http://127.0.0.1:\(port)/metrics")
            #expect(answer.status == 200)
            return Self.metrics(answer.body)
        }

        let run = try Self.pausedRun(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                      "--metrics-file", file], metricsFile: file, log: folder.subpath("import.log"))
        let during = try scrape()
        #expect(during["cairn_run_in_progress{\(labels)}"] == 1)
        #expect(during["node_textfile_scrape_error"] == 0)
        run.send(SIGCONT)
        #expect(try run.waitForExit() == 0, "\(run.output)")
        let after = try scrape()
        #expect(after["cairn_run_in_progress{\(labels)}"] == 0)
        #expect(after["cairn_last_run_outcome{\(labels),outcome=\"success\"}"] == 1)
        #expect(after["cairn_items_total{\(labels),outcome=\"imported\"}"] == 200)

        // SIGINT in the middle of the next run: it stops, says interrupted, and loses nothing.
        for index in 200..<400 {
            try folder.write(try DistinctJPEG.data(byteCount: 4000, seed: UInt8(index % 251)) + Data("\(index)".utf8),
                             to: "src/more/IMG_\(index).jpg")
        }
        let second = try Self.pausedRun(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                         "--metrics-file", file], metricsFile: file, log: folder.subpath("second.log"))
        second.send(SIGINT)
        second.send(SIGCONT)
        #expect(try second.waitForExit() == 130, "\(second.output)")
        let interrupted = try scrape()
        #expect(interrupted["cairn_last_run_outcome{\(labels),outcome=\"interrupted\"}"] == 1)
        #expect(interrupted["cairn_run_in_progress{\(labels)}"] == 0)
        let resumed = try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet"])
        #expect(resumed.status == 0, "\(resumed.standardError)")
        let listed = try CairnBinary.run(["ls", "--library", folder.subpath("lib")])
        #expect(listed.standardOutput.split(separator: "\n").count == 400)
    }

    @Test func aPushgatewayReceivesTheRunAndTheNextRunReplacesIt() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 2)
        let port = try ServiceProcess.freePort()
        let gateway = try ServiceProcess("prometheus-pushgateway", [
            "--web.listen-address=127.0.0.1:\(port)", "--persistence.file=\(folder.subpath("pushgateway.data"))",
        ], logPath: folder.subpath("pushgateway.log"))
        defer { gateway.stop() }
        try gateway.waitForOutput(matching: "Listening on")
        func pushed() throws -> [String] {
            try HTTPProbe.get("http://127.0.0.1:\(port)/metrics").body.split(separator: "\n")
                .filter { $0.hasPrefix("cairn_last_run_timestamp_seconds{") }.map(String.init)
        }
        for round in 0..<2 {
            if round == 1 { try folder.write(Data("new".utf8) + (try DistinctJPEG.data(byteCount: 3000, seed: 9)), to: "src/new.jpg") }
            let result = try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                              "--metrics-push", "http://127.0.0.1:\(port)"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        let series = try pushed()
        #expect(series.count == 1, "one group per job and library: \(series)")
        let line = try #require(series.first)
        #expect(line.contains("job=\"cairn\"") && line.contains("library=\"lib\"") && line.contains("instance=\"\""))
        let status = try CairnBinary.run(["status", "--json", "--library", folder.subpath("lib")])
        let document = try JSONSerialization.jsonObject(with: Data(status.standardOutput.utf8)) as? [String: Any]
        let lastRun = document?["lastRun"] as? [String: Any]
        let started = try #require(lastRun?["startedAt"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let startedAt = try #require(formatter.date(from: started) ?? ISO8601DateFormatter().date(from: started))
        let pushedValue = try #require(Double(line.split(separator: " ").last ?? ""))
        #expect(abs(pushedValue - startedAt.timeIntervalSince1970) < 1, "the second run's start replaced the first's")
    }

    @Test func serveAnswersWhileASyncRunsAndThePageShowsTheRunInChromium() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 120)
        try folder.write(Data("not a picture at all".utf8), to: "src/broken.jpg")
        let first = try CairnBinary.run(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet"])
        #expect(first.status == 3, "one file failed: \(first.standardError)")

        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", folder.subpath("lib"), "--listen", "127.0.0.1:0"],
                                        logPath: folder.subpath("serve.log"))
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        #expect(try HTTPProbe.get(base + "/healthz").body.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        let metrics = try HTTPProbe.get(base + "/metrics")
        try Self.promtoolAccepts(metrics.body)
        #expect(Self.metrics(metrics.body)["cairn_last_run_outcome{library=\"lib\",source=\"src\",outcome=\"partial\"}"] == 1)
        let json = try HTTPProbe.get(base + "/status.json").body
        let status = try CairnBinary.run(["status", "--json", "--library", folder.subpath("lib")]).standardOutput
        func runPart(_ text: String) throws -> NSDictionary? {
            (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["lastRun"] as? NSDictionary
        }
        #expect(try runPart(json) == runPart(status), "/status.json says what `cairn status --json` says")

        // The page is server-rendered, so it reads the same with JavaScript off (its one script, `live.js`, only adds
        // the live section); Chromium renders it.
        let served = try HTTPProbe.get(base + "/").body
        #expect(!served.contains("<script>") && served.contains("<script src=\"live.js\" defer></script>"))
        let page = try Self.chromium(["--dump-dom", base + "/"])
        #expect(page.contains("id=\"count-failed\">1<"))
        #expect(page.contains("id=\"count-imported\">120<"))
        #expect(page.contains("broken.jpg"))
        let failures = (try runPart(status))?["failures"] as? [[String: Any]]
        let reason = try #require(failures?.first { ($0["path"] as? String)?.contains("broken.jpg") == true }?["reason"] as? String)
        #expect(page.contains(reason), "the failure's reason: \(reason)")
        #expect(page.contains("src=\"thumbnails/"))
        #expect(page.contains("<svg"), "the timeline chart")
        for attribute in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"] {
            #expect(!page.contains(attribute), "nothing is loaded from outside the server (\(attribute))")
        }
        let sha1 = try #require(page.range(of: "thumbnails/[0-9a-f]{40}", options: .regularExpression).map { String(page[$0]) })
        let thumbnail = try HTTPProbe.get(base + "/" + sha1)
        #expect(thumbnail.status == 200 && thumbnail.body.hasPrefix("RIFF"), "a WebP thumbnail from the library")
        #expect(try HTTPProbe.get(base + "/thumbnails/..%2F..%2Fcatalog.sqlite").status == 404)

        // While the next sync runs (paused in the middle), the server still answers, from the catalog, without the lock.
        for index in 0..<150 { try folder.write(try DistinctJPEG.data(byteCount: 3000, seed: UInt8(index % 251)) + Data("x\(index)".utf8), to: "src/later/L\(index).jpg") }
        let file = folder.subpath("sync.prom")
        let running = try Self.pausedRun(["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet",
                                          "--metrics-file", file], metricsFile: file, log: folder.subpath("sync.log"))
        let during = try Self.chromium(["--dump-dom", base + "/"])
        // "Syncing · started …" once the catalog records the run, "Syncing now · before this run: …" until then.
        #expect(during.contains(">Syncing"), "the headline says a sync runs")
        #expect(try HTTPProbe.get(base + "/status.json").body.contains("\"state\" : \"syncing\""))
        #expect(Self.metrics(try HTTPProbe.get(base + "/metrics").body)["cairn_run_in_progress{library=\"lib\",source=\"src\"}"] == 1)
        let screenshot = Self.artifact("status-page-during-sync.png")
        _ = try Self.chromium(["--screenshot=\(screenshot)", "--window-size=1100,1400", base + "/"])
        running.send(SIGCONT)
        #expect(try running.waitForExit() == 0, "\(running.output)")
        let done = try Self.chromium(["--dump-dom", base + "/"])
        #expect(done.contains("id=\"count-new\">150<"))
        let afterShot = Self.artifact("status-page.png")
        _ = try Self.chromium(["--screenshot=\(afterShot)", "--window-size=1100,1400", base + "/"])
        let size = (try FileManager.default.attributesOfItem(atPath: afterShot)[.size] as? Int) ?? 0
        #expect(size > 20_000, "a screenshot with pictures in it")
    }

    @Test func thePageShowsWhatWaitsBeforeTheTrashWithItsThumbnailAndTheCommandsThatDecideIt() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 3)
        let sync = ["sync", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet", "--strictness", "strict"]
        #expect(try CairnBinary.run(sync).status == 0)
        try FileManager.default.removeItem(atPath: folder.subpath("src/IMG_1.jpg"))
        #expect(try CairnBinary.run(sync).status == 0)
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", folder.subpath("lib"), "--listen", "127.0.0.1:0"],
                                        logPath: folder.subpath("serve.log"))
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let page = try HTTPProbe.get(base + "/").body
        #expect(page.contains("Waiting before the trash (1)"))
        #expect(page.contains("IMG_1.jpg") && page.contains("<b>quarantine</b>"))
        let sha1 = try #require(page.range(of: "cairn pending approve [0-9a-f]{40}", options: .regularExpression)
            .map { String(page[$0].suffix(40)) })
        #expect(page.contains("cairn pending exclude \(sha1)"))
        #expect(page.contains("src=\"thumbnails/\(sha1)\""), "the item's thumbnail")
        let metrics = Self.metrics(try HTTPProbe.get(base + "/metrics").body)
        #expect(metrics["cairn_reconcile_candidates{library=\"lib\",source=\"src\",state=\"held_by_quarantine\"}"] == 1)
        // The command the page gives works as printed.
        let approve = try CairnBinary.run(["pending", "approve", sha1, "--source", folder.subpath("src"), "--library", folder.subpath("lib")])
        #expect(approve.status == 0, "\(approve.standardError)")
    }

    @Test func aTokenGuardsEverythingButHealthz() throws {
        let (folder, _) = try SyncCommandTests.makeSource(count: 1)
        #expect(try CairnBinary.run(["import", folder.subpath("src"), "--library", folder.subpath("lib"), "--quiet"]).status == 0)
        let token = try folder.write(Data("s3cret-token\n".utf8), to: "token")
        chmod(token, 0o600)
        let refused = try CairnBinary.run(["serve", "--library", folder.subpath("lib"), "--listen", "0.0.0.0:0"])
        #expect(refused.status == 64 && refused.standardError.contains("--token-file"))
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", folder.subpath("lib"), "--listen", "127.0.0.1:0",
                                                           "--token-file", token], logPath: folder.subpath("serve.log"))
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        #expect(try HTTPProbe.get(base + "/metrics").status == 401)
        #expect(try HTTPProbe.get(base + "/", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(try HTTPProbe.get(base + "/metrics", headers: ["Authorization: Bearer s3cret-token"]).status == 200)
        #expect(try HTTPProbe.get(base + "/healthz").status == 200)
        #expect(!server.output.contains("s3cret"), "the token is never printed")
    }

    /// Headless Chromium (its `--dump-dom` and `--screenshot` need its own script engine); its standard output.
    static func chromium(_ arguments: [String]) throws -> String {
        String(decoding: try ExternalTool.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                               "--user-data-dir=\(NSTemporaryDirectory())/cairn-chromium-\(getpid())"]
                                              + arguments), as: UTF8.self)
    }

    /// Where a test leaves a file for a person to look at: `.build/test-artifacts/`.
    static func artifact(_ name: String) -> String {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-artifacts").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder + "/" + name
    }
}
