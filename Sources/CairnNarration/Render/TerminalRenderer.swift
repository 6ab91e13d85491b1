import CairnCore
import Foundation

/// The live view for a person at a terminal:
///
///     ✓ Preparing  820 ms
///     ● Hashing · 12.4 s · fetching server page 3 of 12
///     [██████░░░░░░░░] 42% 1,247/6,512 files · 1.2 GB/3.4 GB · 85.3 MB/s · ETA 1m 05s
///     lanes  transfer 4/4 +12 · thumbnail 2/2
///     03:20:15 hashed   IMG_4612.HEIC
///
/// Finished phases, warnings and errors scroll above; the block below is redrawn in place (cursor up, erase
/// below, rewrite), at most `maxRedrawsPerSecond` times a second judged by event times, every line cut to the
/// terminal width. Call `tick(at:)` from a timer so the elapsed time moves while no events come. At `runEnd` the
/// block is replaced by the summary line and the cursor is shown again.
public final class TerminalRenderer: NarrationHandler {
    public struct Options: Sendable {
        public var colors: Bool
        public var maxRedrawsPerSecond: Double
        public var activityLines: Int
        public var utcOffset: UTCOffset

        public init(colors: Bool = true, maxRedrawsPerSecond: Double = 10, activityLines: Int = 3,
                    utcOffset: UTCOffset = .local) {
            self.colors = colors
            self.maxRedrawsPerSecond = maxRedrawsPerSecond
            self.activityLines = activityLines
            self.utcOffset = utcOffset
        }
    }

    private struct Storage {
        var state = NarrationState()
        var drawnLines = 0
        /// Visible columns of each line drawn: after the terminal narrows, a line may take several rows.
        var drawnWidths: [Int] = []
        var lastRedraw: Date?
        var pendingScrollLines: [String] = []
        var dirty = false
        var cursorHidden = false
        var finished = false
        var redrawCount = 0
    }

    private let sink: any TextSink
    private let columns: @Sendable () -> Int
    private let rows: @Sendable () -> Int?
    private let options: Options
    private let storage = Locked(Storage())

    /// - Parameters:
    ///   - columns: the terminal width, asked at every redraw (it may change while running).
    ///   - rows: the terminal height, when known: the live block never takes more (the cursor cannot move up
    ///     past the screen's top, and a taller block would leave stale frames in the scrollback).
    public init(sink: any TextSink, columns: @escaping @Sendable () -> Int, rows: @escaping @Sendable () -> Int? = { nil },
                options: Options = Options()) {
        self.sink = sink
        self.columns = columns
        self.rows = rows
        self.options = options
    }

    /// Draws on the terminal behind `descriptor` (stdout by default), following its width.
    public convenience init(descriptor: Int32 = 1, options: Options = Options()) {
        self.init(sink: FileDescriptorSink(descriptor: descriptor),
                  columns: { Terminal.columns(of: descriptor) ?? 80 }, rows: { Terminal.rows(of: descriptor) },
                  options: options)
    }

    /// How many times the block was drawn; for tests of the redraw limit.
    public var redrawCount: Int { storage.withLock { $0.redrawCount } }

    public func handle(_ record: NarrationRecord) {
        let output: String? = storage.withLock { storage in
            guard !storage.finished || record.kind == .runStart else { return nil }
            if record.kind == .runStart { storage.finished = false }
            storage.state.apply(record)
            storage.pendingScrollLines += scrollLines(for: record.event)
            storage.dirty = true
            if record.kind == .runEnd { return finalOutput(&storage) }
            return redrawIfDue(&storage, at: record.time)
        }
        if let output { sink.write(output) }
    }

    /// Redraws if something changed or time moved on, within the redraw limit.
    public func tick(at time: Date) {
        let output: String? = storage.withLock { storage in
            guard !storage.finished, storage.state.status == .syncing else { return nil }
            storage.dirty = true
            return redrawIfDue(&storage, at: time)
        }
        if let output { sink.write(output) }
    }

    /// Ticks every `interval` on the system clock until the returned task is cancelled.
    public func startTicking(every interval: Duration = .milliseconds(200),
                             clock: NarrationClock = .system) -> Task<Void, Never> {
        Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                self?.tick(at: clock.now())
            }
        }
    }

    // MARK: Drawing

    private func redrawIfDue(_ storage: inout Storage, at time: Date) -> String? {
        guard storage.dirty else { return nil }
        if let last = storage.lastRedraw {
            let gap = time.timeIntervalSince(last)
            if gap >= 0 && gap < 1 / options.maxRedrawsPerSecond { return nil }
        }
        storage.lastRedraw = time
        storage.dirty = false
        storage.redrawCount += 1
        let width = max(20, columns())
        var out = storage.cursorHidden ? "" : ControlSequence.hideCursor
        storage.cursorHidden = true
        out += erase(&storage) + flushScrollLines(&storage, width: width)
        var block = liveBlock(storage.state, at: time, width: width)
        if let height = rows(), height > 1, block.count > height - 1 { block = Array(block.prefix(height - 1)) }
        out += block.map { $0 + "\n" }.joined()
        storage.drawnLines = block.count
        storage.drawnWidths = block.map(Self.visibleColumns)
        return out
    }

    private func finalOutput(_ storage: inout Storage) -> String {
        let width = max(20, columns())
        storage.finished = true
        storage.redrawCount += 1
        var out = erase(&storage) + flushScrollLines(&storage, width: width)
        // The summary is not redrawn, so it may take several lines: cut at " · " to fit the width.
        let style: TerminalStyle = storage.state.status == .success ? .green : .red
        for line in Self.wrap(NarrationFormat.summaryLine(storage.state), width: width - 1) {
            out += style.apply(line, colors: options.colors) + "\n"
        }
        if storage.cursorHidden { out += ControlSequence.showCursor }
        storage.cursorHidden = false
        return out
    }

    private func erase(_ storage: inout Storage) -> String {
        guard storage.drawnLines > 0 else { return "" }
        defer {
            storage.drawnLines = 0
            storage.drawnWidths = []
        }
        return ControlSequence.moveUp(Self.rowsTaken(storage.drawnWidths, columns: max(1, columns()))) + ControlSequence.eraseBelow
    }

    /// Rows the drawn lines take now: a line wider than the terminal (it narrowed since) wraps onto more.
    static func rowsTaken(_ widths: [Int], columns: Int) -> Int {
        widths.reduce(0) { $0 + max(1, ($1 + columns - 1) / columns) }
    }

    /// Columns a drawn line shows: its characters, without the SGR escape sequences that style it.
    static func visibleColumns(_ line: String) -> Int {
        var count = 0
        var inEscape = false
        for scalar in line.unicodeScalars {
            if inEscape {
                if scalar.properties.isAlphabetic { inEscape = false }
            } else if scalar == "\u{1B}" {
                inEscape = true
            } else {
                count += 1
            }
        }
        return count
    }

    private func flushScrollLines(_ storage: inout Storage, width: Int) -> String {
        defer { storage.pendingScrollLines.removeAll() }
        return storage.pendingScrollLines.map { $0 + "\n" }.joined()
    }

    /// Lines that stay in the scrollback: finished phases, warnings, errors.
    private func scrollLines(for event: NarrationEvent) -> [String] {
        let width = max(20, columns()) - 1
        switch event {
        case .phaseEnd(let phase, let duration, _):
            let text = "✓ " + pad(phase.displayName, 16) + NarrationFormat.duration(duration)
            return [TerminalStyle.green.apply(text.truncated(toColumns: width), colors: options.colors)]
        case .warning(let message, _, _):
            let text = "! " + message
            return [TerminalStyle.yellow.apply(text.truncated(toColumns: width), colors: options.colors)]
        case .error:
            let text = "✗ " + NarrationState.activityDetail(event)
            return [TerminalStyle.red.apply(text.truncated(toColumns: width), colors: options.colors)]
        default:
            return []
        }
    }

    /// The part redrawn in place.
    private func liveBlock(_ state: NarrationState, at now: Date, width: Int) -> [String] {
        let limit = width - 1
        var lines: [String] = []
        var header = "● " + (state.currentPhase?.displayName ?? (state.command.map { "Starting \($0)" } ?? "Starting"))
        if let phase = state.currentPhase, let entry = state.timeline.entry(for: phase) {
            header += " · " + NarrationFormat.duration(entry.elapsed(at: now))
        }
        lines.append(TerminalStyle.bold.apply(header.truncated(toColumns: limit), colors: options.colors))

        if let phase = state.currentPhase, let snapshot = state.progress[phase] {
            lines.append(progressLine(snapshot, phase: phase, width: limit))
        }
        if !state.lanes.isEmpty {
            let text = "lanes  " + state.lanes.map { lane in
                "\(lane.name) \(lane.busy)/\(lane.width)" + (lane.queued > 0 ? " +\(lane.queued)" : "")
            }.joined(separator: " · ")
            lines.append(text.truncated(toColumns: limit))
        }
        let recent = state.activity.newestFirst.filter { $0.kind != .phaseEnd && $0.kind != .runStart }
            .prefix(options.activityLines)
        for entry in recent {
            let text = NarrationFormat.clockTime(entry.time, utcOffset: options.utcOffset) + " "
                + pad(Self.label(entry.kind), 9) + entry.detail
            lines.append(TerminalStyle.dim.apply(text.truncated(toColumns: limit), colors: options.colors))
        }
        return lines
    }

    private func progressLine(_ snapshot: ProgressSnapshot, phase: SyncPhase, width: Int) -> String {
        let detail = NarrationFormat.progressDetail(snapshot, unit: NarrationFormat.unit(for: phase))
        guard let fraction = snapshot.fraction else { return ("[ … ] " + detail).truncated(toColumns: width) }
        let percent = NarrationFormat.percent(fraction)
        let barWidth = max(10, min(30, width - detail.count - percent.count - 4))
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: barWidth - filled) + "]"
        let coloredBar = TerminalStyle.cyan.apply(bar, colors: options.colors)
        let rest = (" " + percent + " " + detail).truncated(toColumns: max(0, width - bar.count))
        return coloredBar + rest
    }

    static func label(_ kind: NarrationEvent.Kind) -> String {
        switch kind {
        case .phaseStart: return "start"
        case .phaseEnd: return "done"
        case .runStart, .runEnd: return "run"
        default: return kind.rawValue
        }
    }

    /// Splits at " · " so each line fits `width`; continuation lines are indented.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var current = ""
        for part in text.components(separatedBy: " · ") {
            if current.isEmpty {
                current = part
            } else if current.count + 3 + part.count <= width {
                current += " · " + part
            } else {
                lines.append(current)
                current = "  " + part
            }
        }
        lines.append(current)
        return lines.map { $0.truncated(toColumns: width) }
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
