import CairnCore
import CairnNarration
import CairnStatus
import Foundation

/// The status page: server-rendered HTML that works without JavaScript and loads nothing from elsewhere.
/// Its chart is inline SVG; its thumbnails come from this server (`thumbnails/<sha1>`). With JavaScript, `live.js`
/// follows `/events` and fills the live section in place; without, the page reloads itself (the refresh is inside
/// `<noscript>`, so it never fires under the live page).
enum StatusPage {
    /// Only this server's own script, styles, pictures and stream; no frame, no plug-in, forms only to itself.
    /// `media-src blob:`: a tape plays through Media Source Extensions, whose source is a `blob:` URL.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self'; "
        + "media-src 'self' blob:; "
        + "style-src 'self' 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// `queue`: the shared queue's status (or why it could not be read), on a server that has one.
    static func render(_ facts: StatusPageFacts, libraryName: String, libraryRoot: String, now: Date,
                       queue: Result<QueueStatus, any Error>? = nil, refreshSeconds: Int = 30) -> String {
        let report = facts.report
        let run = report.lastRun
        var body = ""
        body += "<header><h1>cairn · \(HTML.escape(libraryName))</h1>"
        body += "<p id=\"headline\" class=\"state-\(HTML.escape(report.state))\">"
            + HTML.escape(report.headline(now: now)) + "</p>"
        if let success = report.lastSuccessfulSync {
            body += "<p id=\"last-synced\">Last synced <time datetime=\"\(Timestamp.toTheSecond(success))\">"
                + HTML.escape(NarrationFormat.relative(success, now: now)) + "</time></p>"
        }
        body += "</header>"
        body += live
        if let queue { body += Self.queue(queue) }
        body += timeline(facts.recentRuns, now: now)
        if let run { body += counts(run) }
        body += failures(facts.failures, total: max(run?.counts.failed ?? 0, facts.failures.count))
        body += review(facts, libraryRoot: libraryRoot)
        body += newest(facts.newest)
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <noscript><meta http-equiv="refresh" content="\(refreshSeconds)"></noscript>
            <title>cairn · \(HTML.escape(libraryName))</title>
            <style>\(style)</style><script src="live.js" defer></script></head>
            <body>\(body)<footer>cairn \(CairnVersion.current) · read-only · <span id="refresh-note">refreshes every \(refreshSeconds) s</span> ·
            <a href="status.json">status.json</a> · <a href="metrics">metrics</a></footer></body></html>
            """
    }

    /// The shared queue: its jobs by state, the workers with their leases, the imports holding the library's lock.
    /// `live.js` reads `queue.json` again every few seconds and fills the same elements.
    static func queue(_ result: Result<QueueStatus, any Error>) -> String {
        var html = "<section id=\"queue\" aria-labelledby=\"queue-title\"><h2 id=\"queue-title\">Shared queue</h2>"
        switch result {
        case .failure(let error):
            html += "<p id=\"queue-counts\" class=\"state-failed\">" + HTML.escape("the queue cannot be read: \(error)") + "</p>"
            html += "<table id=\"queue-workers\"><tbody></tbody></table><ul id=\"queue-imports\"></ul>"
        case .success(let status):
            html += "<p id=\"queue-counts\">" + HTML.escape(queueCounts(status)) + "</p>"
            html += "<table id=\"queue-workers\"><tbody>" + status.workers.map { worker in
                "<tr><th>" + HTML.escape("\(worker.host) pid \(worker.pid)") + "</th><td>" + HTML.escape(leases(worker.leases))
                    + "</td><td>" + HTML.escape(String(format: "last beat %.0f s ago", worker.silentFor)) + "</td></tr>"
            }.joined() + "</tbody></table>"
            html += "<ul id=\"queue-imports\">" + status.imports.map {
                "<li>" + HTML.escape("\($0.holder) from \($0.from)") + "</li>"
            }.joined() + "</ul>"
        }
        return html + "</section>"
    }

    /// "waiting 3 (oldest 12 s) · running 2 · done 40 · failed 0"; live.js writes the same line.
    static func queueCounts(_ status: QueueStatus) -> String {
        let oldest = status.oldestWaitingAge.map { String(format: " (oldest %.0f s)", $0) } ?? ""
        return "waiting \(status.waiting)\(oldest) · running \(status.running) · done \(status.done) · failed \(status.failed)"
            + (status.workers.isEmpty ? " · no worker" : "")
    }

    static func leases(_ count: Int) -> String { count == 1 ? "1 lease" : "\(count) leases" }

    /// What `live.js` fills from `/events`: hidden until the stream's first event.
    private static let live = """
        <section id="live" hidden aria-labelledby="live-title">
        <h2 id="live-title">This run</h2>
        <p id="live-state" role="status">connecting…</p>
        <progress id="live-progress" max="1" value="0" aria-labelledby="live-figures"></progress>
        <p id="live-figures"></p>
        <p id="live-counts"></p>
        <div class="columns"><div><h3>Phases</h3><ol id="live-phases"></ol></div>
        <div><h3>Lanes</h3><table id="live-lanes"><tbody></tbody></table></div></div>
        <div id="live-failed" hidden><h3>Failed (<span id="live-failed-count">0</span>)</h3><ul id="live-failures"></ul></div>
        <h3>Activity</h3><ol id="live-feed" reversed></ol>
        <div id="live-newest-box" hidden><h3>Just imported</h3><div id="live-newest" class="grid"></div></div>
        <div id="live-tape" hidden><h3 id="live-tape-title">The tape</h3>
        <video id="live-tape-player" controls muted playsinline preload="auto" width="640" height="360"></video>
        <p id="live-tape-note"></p></div>
        </section>
        """

    private static let phaseColours: [SyncPhase: String] = [
        .preparing: "#8da0cb", .hashing: "#66c2a5", .reconciling: "#ffd92f",
        .importing: "#fc8d62", .finalizing: "#a6d854", .idle: "#b3b3b3",
    ]

    /// The phases of recent runs as horizontal bars, newest on top, on one time scale.
    private static func timeline(_ runs: [RunSummary], now: Date) -> String {
        guard !runs.isEmpty else { return "<section id=\"timeline\"><h2>Runs</h2><p>No run yet.</p></section>" }
        let longest = max(1, runs.map { total($0, now: now) }.max() ?? 1)
        let rowHeight = 22, labelWidth = 250, barWidth = 560
        var svg = "<svg role=\"img\" aria-label=\"phase timeline of recent runs\" width=\"\(labelWidth + barWidth + 80)\" "
            + "height=\(quoted(rowHeight * runs.count + 8)) xmlns=\"http://www.w3.org/2000/svg\">"
        for (row, run) in runs.enumerated() {
            let y = row * rowHeight + 4
            let label = "\(Timestamp.toTheSecond(run.startedAt).prefix(16).replacingOccurrences(of: "T", with: " ")) "
                + "\(run.command ?? "run") · \(run.status.name)"
            svg += "<text x=\"0\" y=\(quoted(y + 14)) class=\"run-label\">\(HTML.escape(label))</text>"
            var x = Double(labelWidth)
            for entry in run.timeline {
                let width = max(1, entry.elapsed(at: now) / longest * Double(barWidth))
                let title = "\(entry.phase.displayName): \(NarrationFormat.duration(entry.elapsed(at: now)))"
                svg += "<rect x=\(quoted(x)) y=\(quoted(y)) width=\(quoted(width)) height=\"16\" "
                    + "fill=\"\(phaseColours[entry.phase] ?? "#999")\"><title>\(HTML.escape(title))</title></rect>"
                x += width
            }
            svg += "<text x=\(quoted(x + 6)) y=\(quoted(y + 14)) class=\"run-label\">"
                + "\(HTML.escape(NarrationFormat.duration(total(run, now: now))))</text>"
        }
        svg += "</svg>"
        let legend = [SyncPhase.preparing, .hashing, .reconciling, .importing, .finalizing].map {
            "<span><i style=\"background:\(phaseColours[$0] ?? "#999")\"></i>\(HTML.escape($0.displayName))</span>"
        }.joined()
        return "<section id=\"timeline\"><h2>Runs</h2>\(svg)<p class=\"legend\">\(legend)</p></section>"
    }

    private static func total(_ run: RunSummary, now: Date) -> Double {
        run.timeline.reduce(0) { $0 + $1.elapsed(at: now) }
    }

    private static func quoted(_ number: Int) -> String { "\"\(number)\"" }
    private static func quoted(_ number: Double) -> String { "\"\(String(format: "%.1f", number))\"" }

    private static func counts(_ run: RunSummary) -> String {
        let c = run.counts
        let rows: [(String, String, Int)] = [
            ("files-seen", "files seen", c.filesSeen), ("hashed", "hashed", c.hashed), ("new", "new", c.new),
            ("duplicates", "duplicates", c.duplicates), ("imported", "imported", c.ready),
            ("kept", "kept without preview", c.keptWithoutPreview), ("failed", "failed", c.failed),
            ("skipped", "skipped", c.skipped), ("confirmed-deleted", "confirmed deleted", c.confirmedDeleted),
        ]
        let cells = rows.map { id, name, value in
            "<tr><th>\(name)</th><td id=\"count-\(id)\">\(NarrationFormat.count(value))</td></tr>"
        }.joined()
        return "<section id=\"counts\"><h2>Last run \(HTML.escape(run.runID))</h2><table>\(cells)</table></section>"
    }

    private static func failures(_ failures: [FileFailure], total: Int) -> String {
        guard total > 0 else { return "" }
        let items = failures.map {
            "<li><code class=\"path\">\(HTML.escape($0.path))</code> <span class=\"reason\">\(HTML.escape($0.reason))</span></li>"
        }.joined()
        let more = total > failures.count ? "<p>… and \(NarrationFormat.count(total - failures.count)) more (`cairn status`).</p>" : ""
        return "<section id=\"failures\"><h2>Failed files (\(NarrationFormat.count(total)))</h2><ul>\(items)</ul>\(more)</section>"
    }

    private static func review(_ facts: StatusPageFacts, libraryRoot: String) -> String {
        guard facts.waitingTotal > 0 else { return "" }
        let library = HTML.shellQuoted(libraryRoot)
        let cards = facts.waiting.map { waiting -> String in
            let source = HTML.shellQuoted(waiting.sourceRoot)
            let picture = waiting.item.map(thumbnail) ?? "<div class=\"no-thumb\">gone</div>"
            let when = waiting.eligibleAt.map { " · eligible \(Timestamp.toTheSecond($0))" } ?? ""
            return """
                <figure class="waiting">\(picture)<figcaption><b>\(HTML.escape(waiting.status))</b>\(HTML.escape(when))<br>
                <code class="path">\(HTML.escape(waiting.item?.sourcePath ?? waiting.sha1))</code><br>
                trash: <code>\(HTML.escape("cairn pending approve \(waiting.sha1) --source \(source) --library \(library)"))</code><br>
                keep: <code>\(HTML.escape("cairn pending exclude \(waiting.sha1) --source \(source) --library \(library)"))</code>
                </figcaption></figure>
                """
        }.joined()
        return "<section id=\"review\"><h2>Waiting before the trash (\(NarrationFormat.count(facts.waitingTotal)))</h2>"
            + "<p>Deleted at the source; held by the quarantine, a safety rail or for review. Trash one now, or keep it for good:</p>"
            + "<div class=\"grid wide\">\(cards)</div></section>"
    }

    private static func newest(_ items: [StatusPageFacts.Item]) -> String {
        guard !items.isEmpty else { return "" }
        let cells = items.map { "<figure>\(thumbnail($0))<figcaption>\(HTML.escape(NarrationFormat.fileName($0.sourcePath)))</figcaption></figure>" }
        return "<section id=\"newest\"><h2>Newest imports</h2><div class=\"grid\">\(cells.joined())</div></section>"
    }

    private static func thumbnail(_ item: StatusPageFacts.Item) -> String {
        guard item.hasThumbnail else { return "<div class=\"no-thumb\">\(HTML.escape(item.kind))</div>" }
        return "<img src=\"thumbnails/\(item.sha1)\" loading=\"lazy\" width=\"160\" height=\"160\" "
            + "alt=\"\(HTML.escape(NarrationFormat.fileName(item.sourcePath)))\">"
    }

    private static let style = """
        body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}
        h1{font-size:1.4em;margin:0}h2{font-size:1.1em;margin:1.4em 0 .5em}
        #headline{font-size:1.2em;margin:.3em 0}.state-success{color:#17692b}.state-failed{color:#a4161a}
        .state-syncing{color:#1d4e89}table{border-collapse:collapse}th{text-align:left;font-weight:normal;padding-right:2em}
        td{text-align:right;font-variant-numeric:tabular-nums}.run-label{font-size:12px}
        .legend span{margin-right:1em}.legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;vertical-align:middle}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(160px,1fr));gap:8px}
        .grid.wide{grid-template-columns:repeat(auto-fill,minmax(320px,1fr))}
        figure{margin:0}figure img,.no-thumb{width:160px;height:160px;object-fit:cover;background:#eee;display:block}
        .no-thumb{display:flex;align-items:center;justify-content:center;color:#777}
        figcaption{font-size:12px;word-break:break-all}code{font-size:12px}.reason{color:#a4161a}
        footer{margin-top:2em;color:#777;font-size:12px}
        #live{border:1px solid #ccd;border-radius:6px;padding:.2em 1em 1em;margin-top:1em}
        #live progress{width:100%;height:1.2em}h3{font-size:1em;margin:1em 0 .3em}
        .columns{display:flex;flex-wrap:wrap;gap:0 3em}#live-feed{max-height:16em;overflow:auto;font-size:12px;padding-left:2em}
        #live-feed .warning{color:#8a5a00}#live-feed .error{color:#a4161a}#live-lanes td,#live-lanes th,#queue-workers td,#queue-workers th{padding:0 .6em 0 0}
        #live-lanes .holding{font-size:12px;color:#555;word-break:break-all}
        """
}
