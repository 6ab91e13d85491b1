import CairnTesting
import CairnCore
import Foundation
import Testing
@testable import CairnNarration
#if canImport(Glibc)
import Glibc
#endif

@Suite struct TerminalRendererTests {
    static let columns = 60

    @Test func redrawsInPlaceOnAPseudoTerminalAndEndsWithASummary() throws {
        let terminal = try PseudoTerminal(columns: UInt16(Self.columns))
        #expect(Terminal.isTerminal(terminal.slave))
        #expect(Terminal.columns(of: terminal.slave) == Self.columns)
        let renderer = TerminalRenderer(descriptor: terminal.slave, options: .init(colors: false, utcOffset: utc))
        let harness = NarratorHarness(extra: [renderer])
        NarratorTests().narrateSmallImport(harness)
        let output = terminal.read(until: ControlSequence.showCursor)

        #expect(output.hasPrefix(ControlSequence.hideCursor))
        #expect(output.hasSuffix(ControlSequence.showCursor))
        // In-place redraw: back to column 1, up over the block, erase below, draw again.
        let redraws = output.matches(of: /\r\u{1B}\[(\d+)A\u{1B}\[J/)
        #expect(redraws.count >= 3)
        #expect(redraws.contains { Int($0.output.1)! >= 3 })  // header, progress bar, activity
        // No colour when colours are off.
        #expect(output.firstMatch(of: /\u{1B}\[[0-9;]*m/) == nil)
        // The summary is the last thing on screen, after the last redraw.
        let visible = output.withoutEscapes
        let lastLines = visible.split(separator: "\n").suffix(2).map(String.init)
        #expect(lastLines.first?.hasPrefix("✓ import finished in 3.8 s · 12 seen") == true)
        #expect(lastLines.last?.hasSuffix("3 ready · 1 failed · 2 skipped · 12.0 kB") == true)
        #expect(visible.contains("✓ Hashing"))
        #expect(visible.contains("✗ /src/IMG_2.JPG: truncated JPEG"))
        #expect(visible.contains("● Hashing"))
        // Every line fits the terminal, so nothing wraps and the cursor arithmetic holds.
        for line in visible.split(separator: "\n") {
            #expect(line.count < Self.columns, "\(line)")
        }
    }

    @Test func drawsAtMostTenTimesASecond() {
        let sink = InMemoryTextSink()
        let renderer = TerminalRenderer(sink: sink, columns: { 80 }, options: .init(colors: false, utcOffset: utc))
        renderer.handle(record(.runStart(command: "run"), at: 0))
        renderer.handle(record(.phaseStart(.hashing, detail: nil), at: 0))
        for index in 1...200 {  // two seconds of notes, one every 10 ms
            renderer.handle(record(.note("note \(index)", phase: nil), at: Double(index) * 0.01))
        }
        #expect(renderer.redrawCount >= 19 && renderer.redrawCount <= 21)
        let before = renderer.redrawCount
        let end = runEnd(.success, at: 2.001)
        renderer.handle(end)
        #expect(renderer.redrawCount == before + 1)
        #expect(sink.text.hasSuffix(ControlSequence.showCursor))
        // Events after the end draw nothing.
        renderer.handle(record(.note("late", phase: nil), at: 3))
        #expect(!sink.text.contains("late"))
    }

    /// Hardening issue, fault 9: stale frames. After the terminal narrows, the last frame's lines wrap onto more
    /// rows, and the cursor must go up over all of them; a block never grows taller than the screen.
    @Test func redrawsClimbOverWrappedLinesAndFitTheScreen() {
        let sink = InMemoryTextSink()
        let width = Locked(80)
        let renderer = TerminalRenderer(sink: sink, columns: { width.withLock { $0 } }, rows: { 4 },
                                        options: .init(colors: false, activityLines: 10, utcOffset: utc))
        renderer.handle(record(.runStart(command: "run"), at: 0))
        renderer.handle(record(.phaseStart(.hashing, detail: nil), at: 0))
        for index in 1...8 {
            renderer.handle(record(.hashed(file: "a-rather-long-folder-name/IMG_\(index).JPG"), at: Double(index) * 0.2))
        }
        let lastFrame = sink.text.components(separatedBy: ControlSequence.eraseBelow).last ?? ""
        let drawn = lastFrame.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(drawn.count <= 3, "a 4-row screen holds at most 3 block lines: \(drawn.count)")
        let widths = drawn.map { TerminalRenderer.visibleColumns(String($0)) }
        width.withLock { $0 = 20 }
        renderer.handle(record(.note("narrower now", phase: nil), at: 5))
        let moves = sink.text.matches(of: /\r\u{1B}\[(\d+)A/).map { Int($0.output.1)! }
        #expect(moves.last == TerminalRenderer.rowsTaken(widths, columns: 20))
        #expect(moves.last.map { $0 > drawn.count } == true, "wrapped lines take more rows than lines")
    }

    @Test func tickMovesTheElapsedTimeWithoutEvents() {
        let sink = InMemoryTextSink()
        let renderer = TerminalRenderer(sink: sink, columns: { 80 }, options: .init(colors: false, utcOffset: utc))
        renderer.handle(record(.runStart(command: "run"), at: 0))
        renderer.handle(record(.phaseStart(.reconciling, detail: nil), at: 0))
        renderer.tick(at: testEpoch.addingTimeInterval(5))
        #expect(sink.text.withoutEscapes.contains("● Reconciling · 5.0 s"))
    }

    @Test func coloursUnlessTurnedOff() {
        let sink = InMemoryTextSink()
        let renderer = TerminalRenderer(sink: sink, columns: { 80 }, options: .init(colors: true, utcOffset: utc))
        renderer.handle(record(.runStart(command: "run"), at: 0))
        renderer.handle(record(.phaseStart(.hashing, detail: nil), at: 0.2))
        #expect(sink.text.contains("\u{1B}[1m● Hashing"))
    }

    @Test func aPipeGetsPlainLines() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        #expect(!Terminal.isTerminal(ends[1]))
        let renderer = NarrationOutput.renderer(mode: .automatic, descriptor: ends[1], environment: [:])
        #expect(renderer is PlainRenderer)
        let narrator = Narrator(runID: "run-1", handler: renderer, clock: ManualNarrationClock(start: testEpoch).clock)
        narrator.runStarted(command: "sync")
        narrator.phaseStarted(.preparing)
        narrator.warning("source is on a slow mount")
        narrator.runEnded(.success)
        close(ends[1])
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(ends[0], &chunk, chunk.count)
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.containsEscape)
        #expect(text.contains("warning: source is on a slow mount"))
        #expect(text.contains("✓ sync finished"))
    }
}
