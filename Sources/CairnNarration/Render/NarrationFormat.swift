import CairnCore
import Foundation

/// Number, size, duration and time formatting shared by every renderer and `cairn status`.
///
/// Hand-rolled rather than locale-driven so output is identical under cron, in tests and on any machine.
public enum NarrationFormat {
    /// "820 ms", "12.4 s", "3m 05s", "2h 03m".
    public static func duration(_ seconds: Double) -> String {
        let seconds = max(0, seconds)
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds < 60 { return "\(oneDecimal(seconds)) s" }
        let whole = Int(seconds.rounded())
        if whole < 3600 { return "\(whole / 60)m \(CivilTime.twoDigits(whole % 60))s" }
        return "\(whole / 3600)h \(CivilTime.twoDigits(whole % 3600 / 60))m"
    }

    /// "6,512".
    public static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// "1.2 GB" (decimal units, like `ls -h --si` and storage vendors).
    public static func bytes(_ value: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var amount = Double(max(0, value))
        var unit = 0
        while amount >= 1000 && unit < units.count - 1 {
            amount /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(amount)) B" : "\(oneDecimal(amount)) \(units[unit])"
    }

    /// "85.3 MB/s".
    public static func byteRate(_ bytesPerSecond: Double) -> String { bytes(Int64(bytesPerSecond)) + "/s" }

    /// "just now", "4 min ago", "3 h ago", "2 days ago"; "in 5 min" for a future date.
    public static func relative(_ date: Date, now: Date) -> String {
        let delta = now.timeIntervalSince(date)
        let magnitude = abs(delta)
        let text: String
        if magnitude < 60 { return "just now" }
        else if magnitude < 3600 { text = "\(Int(magnitude / 60)) min" }
        else if magnitude < 86_400 { text = "\(Int(magnitude / 3600)) h" }
        else {
            let days = Int(magnitude / 86_400)
            text = days == 1 ? "1 day" : "\(days) days"
        }
        return delta >= 0 ? "\(text) ago" : "in \(text)"
    }

    /// "03:20:15" on a clock at `utcOffset` (the second the time falls in).
    public static func clockTime(_ date: Date, utcOffset: UTCOffset) -> String {
        utcOffset.civilTime(date).clockText
    }

    /// "2026-11-22 03:20" on a clock at `utcOffset`.
    public static func dateTime(_ date: Date, utcOffset: UTCOffset) -> String {
        let wall = utcOffset.civilTime(date)
        return wall.dateText + " " + wall.hourMinuteText
    }

    /// The last path component: activity lines name the file, the error lines keep the whole path.
    public static func fileName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        let name = path[path.index(after: slash)...]
        return name.isEmpty ? path : String(name)
    }

    /// "1,247/6,512 files · 1.2 GB/3.4 GB · 42 files/s · 85.3 MB/s · ETA 1m 05s".
    public static func progressDetail(_ snapshot: ProgressSnapshot, unit: String) -> String {
        var parts: [String] = []
        if let total = snapshot.total {
            parts.append("\(count(snapshot.completed))/\(count(total)) \(unit)")
        } else {
            parts.append("\(count(snapshot.completed)) \(unit)")
        }
        if let bytesTotal = snapshot.bytesTotal, bytesTotal > 0 {
            parts.append("\(bytes(snapshot.bytesCompleted))/\(bytes(bytesTotal))")
        } else if snapshot.bytesCompleted > 0 {
            parts.append(bytes(snapshot.bytesCompleted))
        }
        if let rate = snapshot.itemsPerSecond, rate > 0 { parts.append("\(oneDecimal(rate)) \(unit)/s") }
        if let rate = snapshot.bytesPerSecond, rate > 0 { parts.append(byteRate(rate)) }
        if let eta = snapshot.etaSeconds { parts.append("ETA \(duration(eta))") }
        return parts.joined(separator: " · ")
    }

    /// What the progress of `phase` counts.
    public static func unit(for phase: SyncPhase) -> String {
        switch phase {
        case .importing: return "items"
        default: return "files"
        }
    }

    /// "42%" (floored, so 100% means done).
    public static func percent(_ fraction: Double) -> String {
        "\(Int((min(1, max(0, fraction)) * 100).rounded(.down)))%"
    }

    /// The counts worth a line: "6,512 seen · 1,240 hashed · 318 new · 922 duplicates · 316 ready · 2 failed".
    public static func countsLine(_ counts: RunCounts) -> String {
        var parts = ["\(count(counts.filesSeen)) seen"]
        let optional: [(Int, String)] = [
            (counts.hashed, "hashed"), (counts.new, "new"), (counts.duplicates, counts.duplicates == 1 ? "duplicate" : "duplicates"),
            (counts.ready, "ready"), (counts.keptWithoutPreview, "kept without preview"), (counts.failed, "failed"),
            (counts.skipped, "skipped"),
            (counts.confirmedDeleted, "confirmed deleted"),
        ]
        for (value, label) in optional where value > 0 { parts.append("\(count(value)) \(label)") }
        if counts.bytesSeen > 0 { parts.append(bytes(counts.bytesSeen)) }
        return parts.joined(separator: " · ")
    }

    /// The last line of every renderer: "✓ import finished in 1m 12s · …" or "✗ import failed after 12.0 s: …".
    public static func summaryLine(_ state: NarrationState) -> String {
        let name = state.command ?? "run"
        let took = duration(state.endedAt.flatMap { end in state.startedAt.map { end.timeIntervalSince($0) } } ?? 0)
        switch state.status {
        case .ended(let outcome, let message, let needsAuth) where outcome != .success:
            return "✗ \(name) failed after \(took): \(message ?? "failed")" + (needsAuth ? " (credentials needed)" : "")
        default:
            return "✓ \(name) finished in \(took) · \(countsLine(state.counts))"
        }
    }

    static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

extension String {
    /// At most `columns` characters, ending in "…" when cut (every character is taken as one column).
    func truncated(toColumns columns: Int) -> String {
        guard columns > 0 else { return "" }
        guard count > columns else { return self }
        return String(prefix(columns - 1)) + "…"
    }
}
