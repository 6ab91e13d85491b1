import CairnCore
import CairnNarration
import CairnTesting
import Foundation
import XCTest
@testable import CairnMetrics

/// One exposition line: name, labels, value.
struct Sample: Equatable {
    var name: String
    var labels: [String: String]
    var value: Double

    static func parse(_ text: String) -> [Sample] {
        text.split(separator: "\n").compactMap { line -> Sample? in
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                return nil
            }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else { return Sample(name: String(series), labels: [:], value: value) }
            var labels: [String: String] = [:]
            for pair in series[series.index(after: brace)..<series.index(before: series.endIndex)].split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            return Sample(name: String(series[..<brace]), labels: labels, value: value)
        }
    }
}

extension Array where Element == Sample {
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        first { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }?.value
    }
}

final class MetricsExpositionTests: XCTestCase {
    func testEverySeriesCarriesTheLibraryAndSourceAndItsValue() {
        var metrics = LibraryMetrics(library: "family", source: "card")
        metrics.lastSuccess = Date(timeIntervalSince1970: 1_800_000_000)
        metrics.lastRunOutcome = .someFilesFailed
        metrics.failedRunsInARow = 0
        var counts = RunCounts()
        counts.filesSeen = 12; counts.ready = 9; counts.failed = 2; counts.bytesHashed = 4096; counts.retries = 3
        metrics.lastRun = RunSummary(runID: "r", command: "sync", startedAt: Date(timeIntervalSince1970: 1_799_999_000),
                                     endedAt: Date(timeIntervalSince1970: 1_800_000_000), status: .success,
                                     timeline: [PhaseEntry(phase: .hashing, startedAt: Date(timeIntervalSince1970: 1_799_999_000),
                                                           durationSeconds: 12.5)],
                                     counts: counts)
        metrics.failures = [FailureKey(phase: "thumbnail", reason: .corrupt): 2]
        metrics.reconcile = ReconcileMetrics()
        metrics.reconcile?.pendingReview = 4
        metrics.reconcile?.quarantineSeconds = 14 * 86_400
        metrics.sourceHealth = .mostlyGone
        metrics.libraryContent = [.photo: ContentTally(items: 1000, bytes: 5_000_000)]
        let samples = Sample.parse(MetricsExposition.render([metrics], version: "9.9.9"))

        XCTAssertEqual(samples.value("cairn_build_info", ["version": "9.9.9"]), 1)
        for sample in samples where sample.name != "cairn_build_info" {
            XCTAssertEqual(sample.labels["library"], "family", sample.name)
            XCTAssertEqual(sample.labels["source"], "card", sample.name)
        }
        XCTAssertEqual(samples.value("cairn_last_success_timestamp_seconds"), 1_800_000_000)
        XCTAssertEqual(samples.value("cairn_last_run_outcome", ["outcome": "partial"]), 1)
        XCTAssertEqual(samples.value("cairn_last_run_outcome", ["outcome": "success"]), 0)
        XCTAssertEqual(samples.filter { $0.name == "cairn_last_run_outcome" }.count, ExitStatus.metricLabels.count)
        XCTAssertEqual(samples.value("cairn_last_run_duration_seconds", ["phase": "hashing"]), 12.5)
        XCTAssertEqual(samples.value("cairn_items_total", ["outcome": "imported"]), 9)
        XCTAssertEqual(samples.value("cairn_items_total", ["outcome": "failed"]), 2)
        XCTAssertEqual(samples.value("cairn_hashed_bytes_total"), 4096)
        XCTAssertEqual(samples.value("cairn_retries_total"), 3)
        XCTAssertEqual(samples.value("cairn_failures_total", ["phase": "thumbnail", "reason": "corrupt"]), 2)
        XCTAssertEqual(samples.value("cairn_reconcile_candidates", ["state": "pending_review"]), 4)
        XCTAssertEqual(samples.value("cairn_quarantine_period_seconds"), 14 * 86_400)
        XCTAssertEqual(samples.value("cairn_source_health", ["state": "mostly_gone"]), 1)
        XCTAssertEqual(samples.value("cairn_source_health", ["state": "mounted"]), 0)
        XCTAssertEqual(samples.value("cairn_library_assets", ["kind": "photo"]), 1000)
        XCTAssertEqual(samples.value("cairn_library_assets", ["kind": "video"]), 0)
        XCTAssertNil(samples.value("cairn_run_phase_started_timestamp_seconds"), "only while a run is in progress")
    }

    func testTheSeriesCountDependsOnTheShapeNotOnTheLibrarySize() {
        func count(assets: Int) -> Int {
            var metrics = LibraryMetrics(library: "l", source: "s")
            metrics.libraryContent = [.photo: ContentTally(items: assets, bytes: Int64(assets) * 3_000_000),
                                      .video: ContentTally(items: assets / 10, bytes: 1)]
            metrics.lastRunOutcome = .success
            return Sample.parse(MetricsExposition.render([metrics], version: "1")).count
        }
        XCTAssertEqual(count(assets: 1_000), count(assets: 100_000))
    }

    func testTheRecorderKeepsTheRunCurrentAndWritesAtEveryBoundary() {
        let boundaries = Locked<[LibraryMetrics]>([])
        let recorder = RunMetricsRecorder(base: LibraryMetrics(library: "l", source: "s")) { metrics in
            boundaries.withLock { $0.append(metrics) }
        }
        let clock = ManualNarrationClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let narrator = Narrator(runID: "run-1", handler: recorder, clock: clock.clock)
        narrator.runStarted(command: "sync")
        narrator.phaseStarted(.hashing)
        clock.advance(by: 2)
        narrator.hashed(file: "a.jpg", bytes: 10)
        narrator.failed(file: "b.jpg", reason: FailureReason(operation: "decode", "premature end of data", category: .corrupt),
                        phase: .importing)
        // The category travels with the failure: words that read like another category change nothing.
        narrator.failed(file: "d.jpg", reason: FailureReason("HTTP 502: bad gateway", category: .server), phase: .importing)
        narrator.retryScheduled(file: "c.jpg", lane: "transfer", attempt: 2, reason: "read: Input/output error")
        narrator.lanes([LaneOccupancy(name: "transfer", busy: 1, width: 4)])
        XCTAssertTrue(recorder.current.runInProgress)
        XCTAssertEqual(recorder.current.currentPhaseStartedAt, Date(timeIntervalSince1970: 1_800_000_000))
        narrator.phaseEnded(.hashing)
        narrator.runEnded(.success)

        let written = boundaries.withLock { $0 }
        XCTAssertEqual(written.count, 4, "run start, phase start, phase end, run end")
        XCTAssertTrue(written[1].runInProgress)
        XCTAssertFalse(written[3].runInProgress)
        let final = written[3]
        XCTAssertEqual(final.failures, [FailureKey(phase: "importing", reason: .corrupt): 1,
                                        FailureKey(phase: "importing", reason: .server): 1])
        XCTAssertEqual(final.lastRun?.counts.retries, 1)
        XCTAssertEqual(final.lastRun?.counts.hashed, 1)
        XCTAssertEqual(final.lastRun?.timeline.first?.durationSeconds, 2)
        XCTAssertTrue(final.lanes.isEmpty, "no lanes once the run ended")
    }

    func testTheLabelValuesUsersAlertOnStay() {
        // Renaming one breaks users' alerts: values are only ever added.
        let labels = Set(FailureCategory.allCases.map(\.rawValue))
        XCTAssertTrue(labels.isSuperset(of: ["timeout", "crash", "permission", "not_found", "no_space", "io",
                                             "unsupported", "corrupt", "server", "other"]))
        XCTAssertTrue(labels.isSuperset(of: ["network", "auth"]))
    }

    func testOutcomesFollowTheExitCodes() {
        XCTAssertEqual(ExitStatus.success.metricLabel, "success")
        XCTAssertEqual(ExitStatus.someFilesFailed.metricLabel, "partial")
        XCTAssertEqual(ExitStatus.deletionsHeldBySafetyRail.metricLabel, "failed")
        XCTAssertEqual(ExitStatus.libraryLocked.metricLabel, "locked")
        XCTAssertEqual(ExitStatus.needsAuth.metricLabel, "needs_auth")
        XCTAssertEqual(ExitStatus.interrupted.metricLabel, "interrupted")
        // Every exit status has a label the exposition writes.
        XCTAssertEqual(Set(ExitStatus.allCases.map(\.metricLabel)), Set(ExitStatus.metricLabels))
        XCTAssertTrue(ExitStatus.someFilesFailed.succeeded)
        XCTAssertFalse(ExitStatus.interrupted.succeeded)
    }
}

final class MetricsFileTests: XCTestCase {
    func testAWriteReplacesTheFileWholeAndLeavesNoTemporaryName() throws {
        let folder = try TemporaryDirectory(prefix: "metrics-file")
        let path = folder.subpath("cairn.prom")
        try MetricsFile.write("first 1\n", to: path)
        try MetricsFile.write("second 2\n", to: path)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "second 2\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["cairn.prom"])
    }

    func testAFolderThatIsMissingIsNamedInTheError() throws {
        let folder = try TemporaryDirectory(prefix: "metrics-file")
        let path = folder.subpath("no-such-folder/cairn.prom")
        XCTAssertThrowsError(try MetricsFile.write("x 1\n", to: path)) { error in
            XCTAssertTrue("\(error)".contains("no-such-folder"), "\(error)")
        }
    }

    func testAPushgatewayURLMustBeHTTP() {
        XCTAssertThrowsError(try Pushgateway(url: "ftp://example"))
        XCTAssertThrowsError(try Pushgateway(url: "not a url"))
        XCTAssertEqual(try Pushgateway(url: "http://127.0.0.1:9091/").groupURL(library: "family photos"),
                       "http://127.0.0.1:9091/metrics/job/cairn/library/family%20photos")
        XCTAssertEqual(try Pushgateway(url: "https://cron:s3cret@push.example:9091").displayURL, "https://push.example:9091",
                       "a password in the URL is never printed")
    }
}
