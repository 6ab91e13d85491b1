import CairnCore
@testable import CairnPipeline
import CairnTesting
import Testing

/// The memory budget as a resource of the scheduler's core: driven without tasks or timing, phases ending in a
/// random order, every run ends; the phases admitted never hold more than the budget together, except one that runs
/// alone; a phase above the kernel's limit fails with its memory reason, never starts.
@Suite("Scheduler core: memory budget")
struct SchedulerMemoryTests {
    static let mebibyte: Int64 = 1 << 20

    struct Run {
        var finished = false
        /// Each moment the phases holding memory went over the budget without running alone.
        var overBudget: [String] = []
        /// The phases that started, in order: (item, lane, memory admitted with, what the others held then).
        var starts: [(id: ItemID, lane: Lane, memory: Int64, others: Int64)] = []
        var final: [ItemID: ItemState] = [:]
    }

    /// Runs photos whose probes say `footprints`, ending phases in an order `seed` picks; the metadata phase hands
    /// the core each item's footprint, as the real stages do.
    static func run(_ footprints: [MemoryFootprint], budget: MemoryBudget, width: Int = 2, seed: UInt64,
                    clips: Bool = true, queued: Bool = false, itemBytes: Int64 = 1_000, heldUpTo: Int64 = 0) -> Run {
        var configuration = testConfiguration(width: width, inbox: 3)
        configuration.transfer.holdsItemsUpTo = heldUpTo
        configuration.clipsEnabled = clips
        configuration.memory = budget
        configuration.thumbnail.holdsMemory = !queued
        configuration.synthesis.holdsMemory = !queued
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        var random = SplitMix64(seed: seed)
        let records = footprints.indices.map { ItemRecord(item: item(Int64($0 + 1), bytes: itemBytes)) }
        var result = Run()
        var pending = core.start(records, cancelledWithin: nil)
        var running: [(token: UInt64, id: ItemID, lane: Lane)] = []
        for _ in 0..<100_000 {
            for action in pending {
                switch action {
                case .persist(let record): result.final[record.id] = record.state
                case .startPhase(let token, let item, let lane, _, _):
                    let memory = core.running[token]?.memory ?? 0
                    let others = core.memoryInUse - memory
                    result.starts.append((item.id, lane, memory, others))
                    running.append((token, item.id, lane))
                case .finish: result.finished = true
                default: break
                }
            }
            let holding = core.running.values.filter { $0.memory > 0 }
            if core.memoryInUse > budget.bytes && holding.count > 1 {
                result.overBudget.append("\(core.memoryInUse >> 20) MiB in \(holding.count) phases")
            }
            if result.finished || running.isEmpty { return result }
            let phase = running.remove(at: Int(random.next() % UInt64(running.count)))
            let footprint = phase.lane == .metadata ? footprints[Int(phase.id.rawValue) - 1] : nil
            pending = core.phaseEnded(phase.token, .succeeded(.copied, footprint))
        }
        return result
    }

    static func footprints(count: Int, seed: UInt64, largest: Int64) -> [MemoryFootprint] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            MemoryFootprint(thumbnail: Int64(random.nextUnit() * Double(largest)),
                            clip: Int64(random.nextUnit() * Double(largest)))
        }
    }

    @Test(arguments: 1...60 as ClosedRange<UInt64>)
    func everyRunEndsAndNoTwoPhasesHoldMoreThanTheBudget(_ seed: UInt64) {
        // Estimates up to 1.5 budgets: some phases must run alone; clips wait behind thumbnails as well.
        let budget = MemoryBudget(bytes: 400 * Self.mebibyte, origin: .option)
        let footprints = Self.footprints(count: 14, seed: seed, largest: 600 * Self.mebibyte)
        let run = Self.run(footprints, budget: budget, seed: seed &* 31)
        #expect(run.finished, "seed \(seed): the run never ended (a phase waited for memory forever)")
        #expect(run.overBudget.isEmpty, "seed \(seed): \(run.overBudget.prefix(3))")
        #expect(run.final.values.allSatisfy { $0 == .ready }, "seed \(seed): \(run.final.filter { $0.value != .ready })")
        // Every phase above the budget started with nothing else holding memory.
        for start in run.starts where start.memory > budget.bytes {
            #expect(start.others == 0, "seed \(seed): item \(start.id) \(start.lane) started beside \(start.others)")
        }
    }

    @Test func phasesWithinTheBudgetRunSideBySide() {
        // Without a budget's bound, the same run starts two thumbnails at once; within it as well.
        let footprints = [MemoryFootprint](repeating: MemoryFootprint(thumbnail: 100 * Self.mebibyte, clip: 0), count: 6)
        let run = Self.run(footprints, budget: MemoryBudget(bytes: 400 * Self.mebibyte, origin: .option), seed: 7,
                           clips: false)
        #expect(run.finished)
        #expect(run.starts.contains { $0.lane == .thumbnail && $0.others >= 100 * Self.mebibyte },
                "the budget held back phases it had room for")
    }

    @Test func aBudgetOfOnePhaseRunsTheThumbnailsOneAtATime() {
        let footprints = [MemoryFootprint](repeating: MemoryFootprint(thumbnail: 300 * Self.mebibyte, clip: 0), count: 6)
        let run = Self.run(footprints, budget: MemoryBudget(bytes: 400 * Self.mebibyte, origin: .option), seed: 7,
                           clips: false)
        #expect(run.finished)
        let thumbnails = run.starts.filter { $0.lane == .thumbnail }
        #expect(thumbnails.count == 6)
        // Beside a probe's few bytes at most, never beside another thumbnail.
        #expect(thumbnails.allSatisfy { $0.others < 100 * Self.mebibyte }, "\(thumbnails.map(\.others))")
    }

    @Test func aFileSentFromMemoryIsCountedTwiceWhileItsTransferRuns() {
        // 12 MiB photos put from memory hold 24 MiB each (the bytes and the request's copy): a 40 MiB budget has
        // room for one such transfer at a time. Without the setting, a transfer counts nothing.
        let footprints = [MemoryFootprint](repeating: MemoryFootprint(thumbnail: 0, clip: 0), count: 6)
        let budget = MemoryBudget(bytes: 40 * Self.mebibyte, origin: .option)
        let held = Self.run(footprints, budget: budget, seed: 3, clips: false, itemBytes: 12 * Self.mebibyte,
                            heldUpTo: 16 * Self.mebibyte)
        #expect(held.finished)
        #expect(held.overBudget.isEmpty, "\(held.overBudget)")
        let transfers = held.starts.filter { $0.lane == .transfer }
        #expect(transfers.count == 6 && transfers.allSatisfy { $0.memory == 24 * Self.mebibyte }, "\(transfers.map(\.memory))")
        #expect(transfers.allSatisfy { $0.others < 24 * Self.mebibyte }, "\(transfers.map(\.others))")
        let streamed = Self.run(footprints, budget: budget, seed: 3, clips: false, itemBytes: 12 * Self.mebibyte)
        #expect(streamed.starts.filter { $0.lane == .transfer }.allSatisfy { $0.memory == 0 })
    }

    @Test func lanesWhoseWorkIsQueuedForWorkersHoldNoneOfTheBudget() {
        // The same thumbnails, one at a time above; queued for a shared queue's workers, side by side (and none
        // refused, though each is above the hard limit: the worker that runs it has its own).
        let footprints = [MemoryFootprint](repeating: MemoryFootprint(thumbnail: 500 * Self.mebibyte, clip: 0), count: 6)
        let budget = MemoryBudget(bytes: 400 * Self.mebibyte, hardLimit: 450 * Self.mebibyte, origin: .cgroup("memory.max"))
        let run = Self.run(footprints, budget: budget, seed: 7, clips: false, queued: true)
        #expect(run.finished)
        #expect(run.final.values.allSatisfy { $0 == .ready }, "\(run.final)")
        let thumbnails = run.starts.filter { $0.lane == .thumbnail }
        #expect(thumbnails.count == 6 && thumbnails.allSatisfy { $0.memory == 0 })
    }

    @Test func aPhaseAboveTheKernelLimitFailsWithItsMemoryReasonAndTheOthersGoOn() {
        var footprints = [MemoryFootprint](repeating: MemoryFootprint(thumbnail: 50 * Self.mebibyte,
                                                                      clip: 150 * Self.mebibyte), count: 5)
        footprints[2].clip = 900 * Self.mebibyte
        let budget = MemoryBudget(bytes: 300 * Self.mebibyte, hardLimit: 384 * Self.mebibyte, origin: .cgroup("memory.max"))
        var configuration = testConfiguration(width: 2, inbox: 3)
        configuration.memory = budget
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        var pending = core.start((1...5).map { ItemRecord(item: item($0)) }, cancelledWithin: nil)
        var running: [(UInt64, ItemID, Lane)] = []
        var started: [(ItemID, Lane)] = []
        var finished = false
        var states: [ItemID: ItemState] = [:]
        while !finished {
            for action in pending {
                switch action {
                case .startPhase(let token, let item, let lane, _, _):
                    running.append((token, item.id, lane))
                    started.append((item.id, lane))
                case .persist(let record): states[record.id] = record.state
                case .finish: finished = true
                default: break
                }
            }
            guard !finished, !running.isEmpty else { break }
            let (token, id, lane) = running.removeFirst()
            pending = core.phaseEnded(token, .succeeded(.copied, lane == .metadata ? footprints[Int(id.rawValue) - 1] : nil))
        }
        #expect(finished)
        #expect(!started.contains { $0 == (3, .synthesis) }, "the clip that needs 900 MiB never started")
        guard case .failed(let failure) = states[3] else {
            Issue.record("item 3 ended as \(String(describing: states[3]))")
            return
        }
        #expect(failure.reason.category == .memory)
        #expect(failure.phase == .synthesis)
        #expect(!failure.retryable)
        #expect(failure.reason.description.contains("900 MiB") && failure.reason.description.contains("384 MiB"),
                "\(failure.reason)")
        for id in [1, 2, 4, 5] as [ItemID] { #expect(states[id] == .ready, "item \(id): \(String(describing: states[id]))") }
    }

    @Test func anItemProbedInAnEarlierRunIsAdmittedByItsSizeAndNeverRefusedOnAGuess() {
        // Resumed at its thumbnail with no probe in this run: the guess stands in, capped at the least budget.
        let record = ItemRecord(item: item(1, bytes: 400 * Self.mebibyte), state: .thumbnailing)
        var configuration = testConfiguration(width: 1, inbox: 2)
        configuration.memory = MemoryBudget(bytes: MemoryBudget.minimum, hardLimit: MemoryBudget.minimum, origin: .option)
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        let actions = core.start([record], cancelledWithin: nil)
        let token = actions.compactMap { if case .startPhase(let token, _, .thumbnail, _, _) = $0 { token } else { nil } }.first
        #expect(token != nil, "the thumbnail did not start")
        #expect(token.flatMap { core.running[$0]?.memory } == MemoryBudget.minimum)
    }
}
