import CairnTesting
import Foundation
import Testing

/// Issue 61: a failure's category is decided where it happens and reaches NDJSON, the report, the metrics file
/// and `/metrics` unchanged; nothing reads it back out of the English reason.
@Suite struct FailureCategoryCLITests {
    /// The `category` of each JSON line whose `kind` field is `value`, by the file name in its `file` field.
    static func categories(_ lines: String, _ kind: String, _ value: String, file: String) -> [String: String] {
        var found: [String: String] = [:]
        for line in lines.split(separator: "\n") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  object[kind] as? String == value, let path = object[file] as? String else { continue }
            found[(path as NSString).lastPathComponent] = object["category"] as? String ?? "(none)"
        }
        return found
    }

    /// The `category` of each file's `error` event, by file name.
    static func eventCategories(_ ndjson: String) -> [String: String] { categories(ndjson, "event", "error", file: "file") }

    /// The `category` of each failed line of a `--report` file, by file name.
    static func reportCategories(_ report: String) -> [String: String] {
        categories(report, "outcome", "failed", file: "path")
    }

    /// `cairn_failures_total`'s reasons with a count above zero.
    static func metricReasons(_ exposition: String) -> Set<String> {
        var reasons: Set<String> = []
        for line in exposition.split(separator: "\n") where line.hasPrefix("cairn_failures_total{") {
            guard let value = line.split(separator: " ").last, (Double(value) ?? 0) > 0,
                  let range = line.range(of: #"reason="([a-z_]+)""#, options: .regularExpression) else { continue }
            reasons.insert(String(line[range].dropFirst("reason=\"".count).dropLast()))
        }
        return reasons
    }

    /// One import into a small tmpfs (private mount namespace, root): a JPEG whose header is noise (corrupt), a
    /// still whose clip runs past a 1 ms synthesis limit (timeout) and a movie larger than the disk's room (no
    /// space), copied one at a time so that only the movie meets the full disk.
    @Test func aCorruptFileATimedOutPhaseAndAFullDiskLandInTheirOwnCategories() throws {
        let work = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: work.subpath("src"), withIntermediateDirectories: true)
        var noise: UInt32 = 12_345
        let junk = [0xFF, 0xD8, 0xFF, 0xE0] + (0..<4000).map { _ -> UInt8 in
            noise = noise &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: noise >> 24)
        }
        try work.write(Data(junk), to: "src/BROKEN.JPG")
        try MediaFixtures.jpeg(at: work.subpath("src/SLOW.JPG"), width: 640, height: 480)
        var big = Data(count: 3 << 20)
        for index in stride(from: 0, to: big.count, by: 4096) { big[index] = UInt8(truncatingIfNeeded: index >> 12) }
        try work.write(big, to: "src/BIG.MOV")
        try FileManager.default.createDirectory(atPath: work.subpath("mnt"), withIntermediateDirectories: true)
        let script = """
            set -u
            mount -t tmpfs -o size=1600k tmpfs "$MNT" || exit 90
            "$CAIRN" import "$SRC" --library "$MNT/lib" --json --report "$OUT/report.jsonl" \\
                --metrics-file "$OUT/metrics.prom" --lanes transfer=1,timeout.synthesis=1ms --max-attempts 1 \\
                > "$OUT/run.ndjson" 2> "$OUT/run.err"; echo $? > "$OUT/run.rc"
            cp -a "$MNT/lib" "$OUT/lib"
            """
        let text = try FaultInjectionTests.runInPrivateMounts(script, work: work)
        let context = "\(text("run.err"))\n\(text("run.ndjson"))"
        #expect(text("run.rc").trimmingCharacters(in: .whitespacesAndNewlines) == "3", "\(context)")

        let expected = ["BROKEN.JPG": "corrupt", "SLOW.JPG": "timeout", "BIG.MOV": "no_space"]
        #expect(Self.eventCategories(text("run.ndjson")) == expected, "\(context)")
        #expect(Self.reportCategories(text("report.jsonl")) == expected, "\(text("report.jsonl"))")
        #expect(Self.metricReasons(text("metrics.prom")) == Set(expected.values), "\(text("metrics.prom"))")

        // `/metrics` of `cairn serve` reads the same categories back from the catalog.
        let server = try ServiceProcess(CairnBinary.path, ["serve", "--library", work.subpath("lib"), "--listen", "127.0.0.1:0"],
                                        logPath: work.subpath("serve.log"))
        defer { server.stop() }
        let base = "http://127.0.0.1:" + (try server.waitForOutput(matching: "on http://127\\.0\\.0\\.1:([0-9]+)/"))
        let metrics = try HTTPProbe.get(base + "/metrics").body
        #expect(Self.metricReasons(metrics) == Set(expected.values), "\(metrics)")
    }

    /// Every upload answered by a proxy's 502: counted as the server's failure, not as damaged media (its
    /// words, "bad gateway", once sorted it there).
    @Test func anImmichBadGatewayIsTheServersFailure() throws {
        let fixture = try ImmichDestinationTests.Fixture(
            faults: ImmichDouble.Faults(status502: 1, paths: ["/api/assets"]))
        try MediaFixtures.jpeg(at: fixture.folder.subpath("src/UP.JPG"), width: 64, height: 48)
        let report = fixture.folder.subpath("report.jsonl"), metrics = fixture.folder.subpath("metrics.prom")
        let result = try fixture.cairn(["sync", fixture.source, "--json", "--max-attempts", "1", "--report", report,
                                        "--metrics-file", metrics])
        #expect(result.status == 3, "\(result.standardError)\n\(result.standardOutput)")
        #expect(result.standardOutput.contains("HTTP 502"), "\(result.standardOutput)")
        #expect(Self.eventCategories(result.standardOutput) == ["UP.JPG": "server"], "\(result.standardOutput)")
        let reportText = try String(contentsOfFile: report, encoding: .utf8)
        #expect(Self.reportCategories(reportText) == ["UP.JPG": "server"], "\(reportText)")
        let exposition = try String(contentsOfFile: metrics, encoding: .utf8)
        #expect(Self.metricReasons(exposition) == ["server"], "\(exposition)")
    }
}
