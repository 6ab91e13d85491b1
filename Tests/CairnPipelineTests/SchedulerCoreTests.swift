import CairnCore
@testable import CairnPipeline
import Testing

/// The scheduler's decisions as a pure value: driven here without tasks, clocks or timing, every persisted
/// state under every option and phase outcome runs to the end without a trap, and no lane ever holds more
/// than its width.
@Suite("Scheduler core")
struct SchedulerCoreTests {
    /// How each phase try ends in a scenario.
    enum Script: String, CaseIterable, Sendable {
        case succeeds, failsOnceRetryably, failsForGood, timesOutOnce, alwaysTimesOut
        /// The thumbnail's work goes to other workers (`--no-wait`); the other phases succeed.
        case thumbnailLeftToOthers
    }

    struct Drive {
        var finished = false
        var persisted: [ItemRecord] = []
        var events: [PipelineEvent] = []
        var starts = 0
        var lanesStarted: Set<Lane> = []
        var maxSlots: [Lane: Int] = [:]
        /// Lines handed to the page source with each ask, and how many pages were asked for.
        var handedOver: [FileOutcomeEntry] = []
        var pagesAsked = 0
        var mostInPlay = 0
    }

    /// Performs the core's actions the way the actor does, delivering phase ends, late returns of timed-out
    /// work and due retries in order until the core says the run is over.
    /// `pages`: the records come a page at a time instead, each asked for while fewer than `refillBelow` are in play.
    static func drive(_ core: inout SchedulerCore, records: [ItemRecord], script: Script,
                      cancelAfterStarts: Int? = nil, pages: [[ItemRecord]]? = nil, refillBelow: Int = 0) -> Drive {
        var drive = Drive()
        var pagesLeft = pages ?? []
        var pageAsked = false
        var pending = pages == nil ? core.start(records, cancelledWithin: nil)
            : core.start([], cancelledWithin: nil, moreToCome: true, refillBelow: refillBelow)
        var phases: [(token: UInt64, lane: Lane)] = []
        var lateReturns: [UInt64] = []
        var retries: [(id: ItemID, lane: Lane)] = []
        var graces: [UInt64] = []
        var tries: [Lane: Int] = [:]
        var deadlineArmed = false
        for _ in 0..<10_000 {
            for action in pending {
                switch action {
                case .persist(let record): drive.persisted.append(record)
                case .emit(let event): drive.events.append(event)
                case .startPhase(let token, _, let lane, _, _):
                    phases.append((token, lane))
                    drive.starts += 1
                    drive.lanesStarted.insert(lane)
                case .scheduleRetry(let id, let lane, _): retries.append((id, lane))
                case .cancelRetries: retries = []
                case .armDeadline: deadlineArmed = true
                case .disarmDeadline: deadlineArmed = false
                case .cancelPhase: break
                case .armGrace(let token, _): graces.append(token)
                case .disarmGrace(let token): graces.removeAll { $0 == token }
                case .finish: drive.finished = true
                case .requestPage(let ended):
                    drive.handedOver += ended
                    drive.pagesAsked += 1
                    pageAsked = true
                }
            }
            drive.mostInPlay = max(drive.mostInPlay, core.entries.count + core.waiting.count)
            for lane in Lane.allCases {
                drive.maxSlots[lane] = max(drive.maxSlots[lane, default: 0], core.slotsUsed(in: lane))
            }
            if drive.finished { return drive }
            if pageAsked {
                pageAsked = false
                pending = core.pageArrived(pagesLeft.isEmpty ? nil : pagesLeft.removeFirst())
            } else if let limit = cancelAfterStarts, drive.starts >= limit, core.stopReason == nil {
                pending = core.cancel(deadline: .seconds(5))
            } else if !phases.isEmpty {
                let phase = phases.removeFirst()
                tries[phase.lane, default: 0] += 1
                let outcome: PhaseOutcome
                switch script {
                case .succeeds: outcome = .succeeded(.copied)
                case .failsOnceRetryably: outcome = tries[phase.lane] == 1 ? .failed(reason: "busy", retryable: true) : .succeeded(.copied)
                case .failsForGood: outcome = .failed(reason: "corrupt", retryable: false)
                case .thumbnailLeftToOthers: outcome = phase.lane == .thumbnail ? .leftToOthers : .succeeded(.copied)
                case .timesOutOnce, .alwaysTimesOut:
                    outcome = script == .alwaysTimesOut || tries[phase.lane] == 1 ? .timedOut(.seconds(15)) : .succeeded(.copied)
                }
                if case .timedOut = outcome { lateReturns.append(phase.token) }
                pending = core.phaseEnded(phase.token, outcome)
            } else if !lateReturns.isEmpty {
                // Half the hung phases return late; the others outlive their grace.
                let token = lateReturns.removeFirst()
                pending = token % 2 == 0 || !graces.contains(token)
                    ? core.phaseEnded(token, .failed(reason: "late", retryable: true))
                    : core.graceEnded(token)
            } else if !retries.isEmpty {
                let retry = retries.removeFirst()
                pending = core.retryDue(retry.id, in: retry.lane)
            } else if deadlineArmed {
                pending = core.deadlineReached()
            } else {
                return drive  // nothing left to deliver: the caller sees `finished == false`
            }
        }
        return drive
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var state: ItemState
        var kind: MediaKind
        var clips: Bool
        var derivatives: Bool
        var crashCount: Int
        var maxAttempts: Int
        var script: Script
        var testDescription: String {
            "\(state) \(kind) clips \(clips ? "on" : "off") derivatives \(derivatives ? "on" : "off") crashes \(crashCount) attempts \(maxAttempts) \(script)"
        }
    }

    static var cases: [Case] {
        PersistedStateTests.persistedStates.flatMap { state in
            [MediaKind.photo, .video].flatMap { kind in
                [true, false].flatMap { clips in
                    [true, false].flatMap { derivatives in
                        [0, 2].flatMap { crashes in
                            [1, 3].flatMap { attempts in
                                Script.allCases.map {
                                    Case(state: state, kind: kind, clips: clips, derivatives: derivatives, crashCount: crashes,
                                         maxAttempts: attempts, script: $0)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test(arguments: cases)
    func everyPersistedStateRunsToTheEndWithoutATrap(_ scenario: Case) {
        var configuration = testConfiguration(width: 1, maxAttempts: scenario.maxAttempts)
        configuration.clipsEnabled = scenario.clips
        configuration.derivativesEnabled = scenario.derivatives
        let record = ItemRecord(item: item(1, scenario.kind), state: scenario.state,
                                inFlight: scenario.crashCount > 0, crashCount: scenario.crashCount)
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        let drive = Self.drive(&core, records: [record], script: scenario.script)
        #expect(drive.finished, "\(scenario.testDescription): the run never ended")
        let final = drive.persisted.last(where: { $0.id == 1 })?.state ?? scenario.state
        // Done for this run: finished, or failed (a retryable failure that used up its tries waits for the next run).
        let failed = if case .failed = final { true } else { false }
        // Archive only: an item whose original is in place waits, owing its derivatives, for a later run.
        let awaitsDerivatives = !scenario.derivatives && final.resumeLane.map { $0 != .transfer } == true
        // Its thumbnail left to other workers: the item waits, owing it, for the run that records their work.
        let leftToOthers = scenario.script == .thumbnailLeftToOthers && final == .thumbnailing
        #expect(final.isTerminal || failed || awaitsDerivatives || leftToOthers, "\(scenario.testDescription) ended as \(final)")
        if !scenario.derivatives {
            #expect(drive.lanesStarted.isSubset(of: [.transfer]), "\(scenario.testDescription): derivatives made")
        }
        #expect(drive.persisted.allSatisfy { !$0.inFlight || $0.state.activeLane != nil })
        if scenario.script == .succeeds, scenario.crashCount == 0, scenario.state.resumeLane != nil {
            let onRoute = scenario.state.resumeLane != .synthesis || (scenario.kind == .photo && scenario.clips)
            if scenario.derivatives {
                #expect(!onRoute || final == .ready, "\(scenario.testDescription) ended as \(final)")
            } else {
                #expect(!onRoute || awaitsDerivatives || final == .ready, "\(scenario.testDescription) ended as \(final)")
                #expect(final.resumeLane != .transfer, "\(scenario.testDescription): the original was not put in place")
            }
        }
        let entries = core.result().report.entries
        #expect(entries.count == 1)
        #expect(!entries.contains { if case .unfinished = $0.outcome { true } else { false } }, "\(scenario.testDescription)")
    }

    @Test(arguments: Script.allCases)
    func manyItemsNeverHoldMoreSlotsThanTheWidthAndAllEnd(_ script: Script) {
        let configuration = testConfiguration(width: 2, inbox: 2, maxAttempts: 3)
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        let records = (1...12).map { ItemRecord(item: item(Int64($0), $0 % 3 == 0 ? .video : .photo)) }
        let drive = Self.drive(&core, records: records, script: script)
        #expect(drive.finished)
        for lane in Lane.allCases { #expect(drive.maxSlots[lane, default: 0] <= 2, "\(lane): \(drive.maxSlots[lane, default: 0])") }
        let outcomes = core.result().report.entries.map(\.outcome)
        #expect(outcomes.count == 12)
        #expect(!outcomes.contains { if case .unfinished = $0 { true } else { false } })
    }

    @Test func archiveOnlyPutsOriginalsInPlaceAndLeavesTheirDerivativesOwed() {
        var configuration = testConfiguration(width: 2, inbox: 2)
        configuration.derivativesEnabled = false
        var core = SchedulerCore(configuration: configuration, random: halfJitter)
        let fresh = (1...4).map { ItemRecord(item: item(Int64($0), $0 == 4 ? .video : .photo)) }
        let owing = ItemRecord(item: item(5), state: .thumbnailing)
        let drive = Self.drive(&core, records: fresh + [owing], script: .succeeds)
        #expect(drive.finished)
        #expect(drive.lanesStarted == [.transfer])
        #expect(drive.starts == 4, "one transfer per fresh item, none for the item that owes only derivatives")
        for id in 1...4 {
            #expect(drive.persisted.last { $0.id.rawValue == Int64(id) }?.state == .probing, "item \(id) owes its probe")
        }
        #expect(!drive.persisted.contains { $0.id == 5 }, "the owing item is left as it was")
        let outcomes = core.result().report.entries.map(\.outcome)
        #expect(outcomes == [FileOutcome](repeating: .archived, count: 5))
    }

    @Test func anItemWhoseThumbnailIsLeftToOthersEndsTheRunOwingItOutOfFlight() {
        var core = SchedulerCore(configuration: testConfiguration(width: 2, inbox: 2), random: halfJitter)
        let records = (1...6).map { ItemRecord(item: item(Int64($0), $0 == 6 ? .video : .photo)) }
        let drive = Self.drive(&core, records: records, script: .thumbnailLeftToOthers)
        #expect(drive.finished)
        #expect(!drive.lanesStarted.contains(.synthesis), "nothing goes past the thumbnail left to others")
        for id in 1...6 {
            let last = drive.persisted.last { $0.id.rawValue == Int64(id) }
            #expect(last?.state == .thumbnailing && last?.inFlight == false, "item \(id): \(String(describing: last))")
        }
        let result = core.result()
        #expect(result.completion == .success)
        #expect(result.report.entries.map(\.outcome) == [FileOutcome](repeating: .archived, count: 6))
    }

    @Test func aCancelStopsNewWorkAndLeavesTheRestResumable() {
        var core = SchedulerCore(configuration: testConfiguration(width: 2, inbox: 2), random: halfJitter)
        let records = (1...12).map { ItemRecord(item: item(Int64($0))) }
        let drive = Self.drive(&core, records: records, script: .succeeds, cancelAfterStarts: 5)
        #expect(drive.finished)
        #expect(drive.events.contains { if case .stopping(.interrupted) = $0 { true } else { false } })
        let result = core.result()
        #expect(result.completion == .interrupted)
        #expect(result.report.entries.count == 12)
        #expect(result.report.entries.contains { if case .unfinished = $0.outcome { true } else { false } })
        // Started phases still finish within the deadline; nothing more starts after the cancel.
        #expect(drive.starts <= 7)
    }

    /// Fed a page at a time, every item ends once, its line handed to the source or left in the result, never both;
    /// at most about two pages are in play; the run ends only after the source said it has no more.
    @Test(arguments: Script.allCases)
    func pagesFeedOneRunAndEveryLineIsHandedOverOnce(_ script: Script) {
        var core = SchedulerCore(configuration: testConfiguration(width: 2, inbox: 2, maxAttempts: 3), random: halfJitter)
        let records = (1...20).map { ItemRecord(item: item(Int64($0), $0 % 3 == 0 ? .video : .photo)) }
        let pages = stride(from: 0, to: 20, by: 4).map { Array(records[$0..<min($0 + 4, 20)]) }
        let drive = Self.drive(&core, records: [], script: script, pages: pages, refillBelow: 4)
        #expect(drive.finished)
        #expect(drive.pagesAsked == 6, "five pages, then the ask that learns there are no more")
        #expect(drive.mostInPlay <= 8)
        let lines = drive.handedOver + core.result().report.entries
        #expect(lines.map(\.path).sorted() == records.map(\.item.relativePath).sorted())
        #expect(!lines.contains { if case .unfinished = $0.outcome { true } else { false } })
    }

    /// A cancel while pages remain: no more pages are asked for, and the run ends with the rest resumable.
    @Test func aCancelStopsAskingForPages() {
        var core = SchedulerCore(configuration: testConfiguration(width: 2, inbox: 2), random: halfJitter)
        let records = (1...40).map { ItemRecord(item: item(Int64($0))) }
        let pages = stride(from: 0, to: 40, by: 4).map { Array(records[$0..<($0 + 4)]) }
        let drive = Self.drive(&core, records: [], script: .succeeds, cancelAfterStarts: 6, pages: pages, refillBelow: 4)
        #expect(drive.finished)
        #expect(drive.pagesAsked < 10)
        #expect(core.result().completion == .interrupted)
    }

    /// A crash suspect of the first page runs alone, after everything else: after the later pages too.
    @Test func aSuspectRunsAloneAfterThePagesThatCameLater() {
        var core = SchedulerCore(configuration: testConfiguration(width: 2, inbox: 2), random: halfJitter)
        let suspect = ItemRecord(item: item(1), state: .thumbnailing, crashCount: 1)
        let later = (2...7).map { ItemRecord(item: item(Int64($0), .video)) }
        let pages = [[suspect], Array(later[0..<3]), Array(later[3...])]
        let drive = Self.drive(&core, records: [], script: .succeeds, pages: pages, refillBelow: 2)
        #expect(drive.finished)
        let suspectStarts = drive.persisted.firstIndex { $0.id == 1 && $0.runsAlone }
        let lastOtherReady = drive.persisted.lastIndex { $0.id != 1 && $0.state == .ready }
        #expect(suspectStarts != nil && lastOtherReady != nil)
        #expect((suspectStarts ?? 0) > (lastOtherReady ?? .max), "the suspect ran beside items of a later page")
    }
}
