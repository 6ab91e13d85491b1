import CairnCore
import CairnNarration
import Foundation
import Prometheus

/// Renders `LibraryMetrics` in Prometheus's text exposition format, through swift-prometheus: a fresh registry per
/// rendering, so a value set once is never carried into a later file by mistake.
public enum MetricsExposition {
    /// The text for `libraries` (one per library and source), with `cairn_build_info`.
    public static func render(_ libraries: [LibraryMetrics], version: String) -> String {
        let registry = PrometheusCollectorRegistry()
        registry.makeGauge(descriptor: descriptor("cairn_build_info"), labels: [("version", version)]).set(to: 1)
        for library in libraries { record(library, registry: registry) }
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The help line of every series cairn writes; a series not listed here is a programming error.
    static let help: [String: String] = [
        "cairn_build_info": "The cairn version that wrote these metrics (always 1).",
        "cairn_last_success_timestamp_seconds":
            "When the newest successful or partly successful run ended, from the catalog's run history (0: never).",
        "cairn_last_run_timestamp_seconds": "When the newest run started.",
        "cairn_last_run_outcome": "How the newest run ended: 1 for its outcome, 0 for the others.",
        "cairn_last_run_duration_seconds": "How long each phase of the newest run took (so far, while it runs).",
        "cairn_failed_runs_in_a_row": "The newest runs in a row that failed, were interrupted or needed credentials.",
        "cairn_run_in_progress": "1 while a run works on this library.",
        "cairn_run_phase_started_timestamp_seconds": "When the running run's current phase started.",
        "cairn_items_total": "Files of the newest run by outcome.",
        "cairn_imported_items_total": "Items the newest run added to the library, by kind.",
        "cairn_imported_bytes_total": "Bytes the newest run added to the library, by kind.",
        "cairn_hashed_bytes_total": "Bytes the newest run hashed.",
        "cairn_transferred_bytes_total": "Bytes the newest run copied or uploaded to its destination.",
        "cairn_failures_total": "Files of the newest run that failed, by phase and reason.",
        "cairn_retries_total": "Retries the newest run scheduled after a retryable failure.",
        "cairn_lane_in_flight": "Work running in each pipeline lane.",
        "cairn_lane_capacity": "Slots of each pipeline lane.",
        "cairn_lane_queued": "Work waiting for each pipeline lane.",
        "cairn_reconcile_candidates": "Library items deleted at the source, by what holds them.",
        "cairn_reconcile_oldest_pending_timestamp_seconds":
            "When the oldest item waiting for review was found deleted at the source.",
        "cairn_quarantine_period_seconds": "How long a deletion at the source is held before it may reach the trash.",
        "cairn_source_health": "How the source looked to the newest sync's safety rails: 1 for its state.",
        "cairn_library_assets": "Items the library holds, by kind.",
        "cairn_library_bytes": "Bytes of originals the library holds, by kind.",
        "cairn_destination_drift_assets":
            "Content cairn brought to the destination that its last checks found deleted there, by state.",
    ]

    /// The series' name as given (no namespace or unit added) with its help line (`promtool check metrics` reports
    /// an empty one).
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        guard let text = help[name] else { preconditionFailure("no help text for \(name)") }
        return MetricNameDescriptor(metricName: name, unitName: "", helpText: text)
    }

    private static func record(_ m: LibraryMetrics, registry: PrometheusCollectorRegistry) {
        let base = [("library", m.library), ("source", m.source)]
        func gauge(_ name: String, _ value: Double, _ labels: [(String, String)] = []) {
            registry.makeGauge(descriptor: descriptor(name), labels: base + labels).set(to: value)
        }
        func counter(_ name: String, _ value: Int64, _ labels: [(String, String)] = []) {
            registry.makeCounter(descriptor: descriptor(name), labels: base + labels).increment(by: max(0, value))
        }
        func seconds(_ date: Date?) -> Double { date?.timeIntervalSince1970 ?? 0 }

        gauge("cairn_last_success_timestamp_seconds", seconds(m.lastSuccess))
        gauge("cairn_failed_runs_in_a_row", Double(m.failedRunsInARow))
        gauge("cairn_run_in_progress", m.runInProgress ? 1 : 0)
        if let started = m.currentPhaseStartedAt { gauge("cairn_run_phase_started_timestamp_seconds", seconds(started)) }
        if let outcome = m.lastRunOutcome {
            for label in ExitStatus.metricLabels {
                gauge("cairn_last_run_outcome", label == outcome.metricLabel ? 1 : 0, [("outcome", label)])
            }
        }
        if let run = m.lastRun {
            gauge("cairn_last_run_timestamp_seconds", seconds(run.startedAt))
            let now = Date()
            var durations: [SyncPhase: Double] = [:]
            for entry in run.timeline { durations[entry.phase, default: 0] += entry.elapsed(at: now) }
            for (phase, duration) in durations.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                gauge("cairn_last_run_duration_seconds", duration, [("phase", phase.rawValue)])
            }
            let c = run.counts
            let outcomes: [(String, Int)] = [
                ("seen", c.filesSeen), ("hashed", c.hashed), ("new", c.new), ("duplicate", c.duplicates),
                ("imported", c.ready), ("kept_without_preview", c.keptWithoutPreview), ("failed", c.failed),
                ("skipped", c.skipped), ("confirmed_deleted", c.confirmedDeleted),
            ]
            for (outcome, count) in outcomes { counter("cairn_items_total", Int64(count), [("outcome", outcome)]) }
            counter("cairn_hashed_bytes_total", c.bytesHashed)
            counter("cairn_retries_total", Int64(c.retries))
            counter("cairn_transferred_bytes_total", m.bytesTransferred)
            for kind in [MediaKind.photo, .video] {
                let tally = m.importedByLastRun[kind] ?? ContentTally(items: 0, bytes: 0)
                counter("cairn_imported_items_total", Int64(tally.items), [("kind", kind.rawValue)])
                counter("cairn_imported_bytes_total", tally.bytes, [("kind", kind.rawValue)])
            }
        }
        for (key, count) in m.failures.sorted(by: { ($0.key.phase, $0.key.reason.rawValue) < ($1.key.phase, $1.key.reason.rawValue) }) {
            counter("cairn_failures_total", Int64(count), [("phase", key.phase), ("reason", key.reason.rawValue)])
        }
        for lane in m.lanes {
            gauge("cairn_lane_in_flight", Double(lane.busy), [("lane", lane.name)])
            gauge("cairn_lane_capacity", Double(lane.width), [("lane", lane.name)])
            gauge("cairn_lane_queued", Double(lane.queued), [("lane", lane.name)])
        }
        for (state, count) in m.destinationDrift.sorted(by: { $0.key < $1.key }) {
            gauge("cairn_destination_drift_assets", Double(count), [("state", state)])
        }
        if let r = m.reconcile {
            let states: [(String, Int)] = [
                ("trash_now", r.trashNow), ("pending_review", r.pendingReview), ("held_by_quarantine", r.heldByQuarantine),
                ("held_by_rail", r.heldByRail), ("deferred", r.deferred),
            ]
            for (state, count) in states { gauge("cairn_reconcile_candidates", Double(count), [("state", state)]) }
            if let oldest = r.oldestPendingSince { gauge("cairn_reconcile_oldest_pending_timestamp_seconds", seconds(oldest)) }
            if let quarantine = r.quarantineSeconds { gauge("cairn_quarantine_period_seconds", quarantine) }
        }
        if let health = m.sourceHealth {
            for each in SourceHealth.allCases {
                gauge("cairn_source_health", each == health ? 1 : 0, [("state", each.rawValue)])
            }
        }
        for kind in [MediaKind.photo, .video] where !m.libraryContent.isEmpty {
            let tally = m.libraryContent[kind] ?? ContentTally(items: 0, bytes: 0)
            gauge("cairn_library_assets", Double(tally.items), [("kind", kind.rawValue)])
            gauge("cairn_library_bytes", Double(tally.bytes), [("kind", kind.rawValue)])
        }
    }
}
