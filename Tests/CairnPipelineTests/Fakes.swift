import CairnCore
@testable import CairnPipeline
import CairnTesting
import Foundation

/// Stage work scripted per test. Logs every start and end, in order.
final class FakeStages: PipelineStages, @unchecked Sendable {
    enum Mark: Equatable, Sendable { case start(Lane, ItemID), end(Lane, ItemID) }

    typealias Script = @Sendable (_ item: ImportItem, _ lane: Lane, _ call: Int) async throws -> Void

    private let signal: TestSignal
    private let script: Script
    private let duplicates: Set<ItemID>
    private let state = Locked<(log: [Mark], calls: [String: Int], running: Int, maxRunning: Int)>(([], [:], 0, 0))

    init(signal: TestSignal, duplicates: Set<ItemID> = [], script: @escaping Script = { _, _, _ in }) {
        self.signal = signal
        self.duplicates = duplicates
        self.script = script
    }

    var log: [Mark] { state.current.log }
    /// Most stage calls running at once, over every lane.
    var maxRunning: Int { state.current.maxRunning }

    func calls(_ lane: Lane) -> Int { state.current.log.count { if case .start(lane, _) = $0 { true } else { false } } }
    func calls(_ lane: Lane, _ id: ItemID) -> Int { state.current.calls["\(lane)\(id)", default: 0] }
    func finished(_ lane: Lane) -> Int { state.current.log.count { if case .end(lane, _) = $0 { true } else { false } } }
    func starts(_ lane: Lane) -> [ItemID] {
        state.current.log.compactMap { if case .start(lane, let id) = $0 { id } else { nil } }
    }

    func transfer(_ item: ImportItem) async throws -> PhaseResult {
        try await perform(item, .transfer)
        return PhaseResult(duplicates.contains(item.id) ? .alreadyInLibrary : .copied, products: Made(lane: .transfer))
    }
    func readMetadata(_ item: ImportItem) async throws -> PhaseResult {
        try await perform(item, .metadata)
        return PhaseResult(products: Made(lane: .metadata))
    }
    func makeThumbnail(_ item: ImportItem) async throws -> PhaseResult {
        try await perform(item, .thumbnail)
        return PhaseResult(products: Made(lane: .thumbnail))
    }
    func synthesizeClip(_ item: ImportItem) async throws -> PhaseResult {
        try await perform(item, .synthesis)
        return PhaseResult(products: Made(lane: .synthesis))
    }

    private func perform(_ item: ImportItem, _ lane: Lane) async throws {
        let call = state.withValue { value -> Int in
            value.log.append(.start(lane, item.id))
            value.calls["\(lane)\(item.id)", default: 0] += 1
            value.running += 1
            value.maxRunning = max(value.maxRunning, value.running)
            return value.calls["\(lane)\(item.id)", default: 0]
        }
        signal.changed()
        defer {
            state.withValue { value in
                value.log.append(.end(lane, item.id))
                value.running -= 1
            }
            signal.changed()
        }
        try await script(item, lane, call)
    }
}

/// Holds stage work until the test opens it; counts who arrived. Honors task cancellation.
final class Gate: @unchecked Sendable {
    private let signal: TestSignal
    private let state = Locked<(open: Bool, arrivals: Int, waiting: [UInt64: CheckedContinuation<Void, any Error>], next: UInt64)>((false, 0, [:], 0))

    init(signal: TestSignal) { self.signal = signal }

    var arrivals: Int { state.current.arrivals }

    func open() {
        let waiting = state.withValue { value -> [CheckedContinuation<Void, any Error>] in
            value.open = true
            defer { value.waiting = [:] }
            return Array(value.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    func pass() async throws {
        let id = state.withValue { value -> UInt64 in value.next += 1; return value.next }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let go = state.withValue { value -> Bool? in
                    value.arrivals += 1
                    if Task.isCancelled { return nil }
                    if value.open { return true }
                    value.waiting[id] = continuation
                    return false
                }
                switch go {
                case nil: continuation.resume(throwing: CancellationError())
                case true?: continuation.resume()
                case false?: break
                }
                signal.changed()
            }
        } onCancel: {
            let continuation = state.withValue { $0.waiting.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }
}

/// Collects scheduler events.
final class EventLog: @unchecked Sendable {
    private let signal: TestSignal
    private let events = Locked<[PipelineEvent]>([])

    init(signal: TestSignal) { self.signal = signal }

    var handler: @Sendable (PipelineEvent) -> Void {
        { [self] event in
            events.withValue { $0.append(event) }
            signal.changed()
        }
    }

    var all: [PipelineEvent] { events.current }

    var progress: [PipelineProgress] { all.compactMap { if case .progress(let p) = $0 { p } else { nil } } }

    func count(where predicate: (PipelineEvent) -> Bool) -> Int { all.count(where: predicate) }

    var backPressureCount: Int { count { if case .backPressure = $0 { true } else { false } } }
}

/// Always the same number: jitter becomes exact.
struct FixedRandom: RandomNumberGenerator, Sendable {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

/// Half of the jitter range.
let halfJitter = FixedRandom(value: 1 << 63)

func item(_ id: Int64, _ kind: MediaKind = .photo, bytes: Int64 = 1_000) -> ImportItem {
    ImportItem(id: ItemID(id), relativePath: "DCIM/\(kind == .video ? "MOV" : "IMG")_\(id).\(kind == .video ? "mov" : "jpg")",
               sourceRoot: "/source", kind: kind, byteCount: bytes,
               checksum: Checksum(hex: String(repeating: "0", count: 24) + String(format: "%016llx", id))!)
}

func placeholders(_ count: Int, _ kind: MediaKind = .photo) -> [ItemRecord] {
    (1...count).map { ItemRecord(item: item(Int64($0), kind)) }
}

/// Small, deterministic lanes for tests.
func testConfiguration(width: Int = 2, inbox: Int = 4, maxAttempts: Int = 3) -> PipelineConfiguration {
    var configuration = PipelineConfiguration.defaults(cores: 2)
    for lane in Lane.allCases {
        configuration[lane].width = width
        configuration[lane].ahead = 0
        configuration[lane].inboxCapacity = inbox
        configuration[lane].smallItemRunners = 0
    }
    // Each lane's width alone bounds its phases; the decoders' shared bound has tests of its own.
    configuration.decoders = nil
    configuration.maxAttempts = maxAttempts
    // Every record reaches the store as soon as the one before it is saved: the tests read the store mid-run.
    configuration.commitLinger = .zero
    configuration.backoff = RetryPolicy(base: .seconds(1), cap: .seconds(60), jitter: 1...1.2)
    return configuration
}

/// A scheduler with fakes, a manual clock and fixed jitter.
struct Harness {
    let signal: TestSignal
    let clock: ManualClock
    let store: InMemoryItemStateStore
    let stages: FakeStages
    let events: EventLog
    let scheduler: PipelineScheduler

    init(signal: TestSignal = TestSignal(), configuration: PipelineConfiguration = testConfiguration(),
         records: [ItemRecord] = [], duplicates: Set<ItemID> = [],
         script: @escaping FakeStages.Script = { _, _, _ in }) {
        self.signal = signal
        clock = ManualClock(signal: signal)
        store = InMemoryItemStateStore(records)
        stages = FakeStages(signal: signal, duplicates: duplicates, script: script)
        events = EventLog(signal: signal)
        scheduler = PipelineScheduler(configuration: configuration, stages: stages, store: store, clock: clock,
                                      random: halfJitter, onEvent: events.handler)
    }
}

/// What a fake phase made: its lane, for the store to find with the item's move.
struct Made: StageProducts, Equatable {
    let lane: Lane
}
