import CairnCore
import CairnLibrary
import CairnMedia
@testable import CairnQueue
@testable import CairnSharedWork
import CairnTapeBuild
import CairnTesting
import Foundation
import Testing

/// A queue worker's memory budget: its jobs wait for room by their estimates, by the rule the import's scheduler
/// follows (`MemoryBudget.admission`); one above the cgroup's limit fails with its memory reason.
@Suite struct WorkerMemoryTests {
    static let mebibyte: Int64 = 1 << 20

    /// Long enough that only a hang reaches it. The test's own work runs on its own thread, but its start and end go
    /// through the cooperative pool, which the command-line tests beside it hold while their child processes run:
    /// under ThreadSanitizer, for the whole target's 14 minutes (both tests ended after 726 s, over a 1-minute limit).
    static let hangLimit = TimeLimitTrait.Duration.minutes(20)

    /// Jobs running at once, and the most the gate held while more than one ran.
    final class Overlap: Sendable {
        private let state = Locked((running: 0, most: 0, heldBesideOthers: Int64(0)))
        func enter(_ gate: MemoryGate) {
            state.withLock {
                $0.running += 1
                $0.most = max($0.most, $0.running)
                if $0.running > 1 { $0.heldBesideOthers = max($0.heldBesideOthers, gate.inUse) }
            }
        }
        func leave() { state.withLock { $0.running -= 1 } }
        var most: Int { state.withLock { $0.most } }
        var heldBesideOthers: Int64 { state.withLock { $0.heldBesideOthers } }
    }

    @Test(.timeLimit(Self.hangLimit))
    func jobsThatFitRunTogetherAndTheRestOneAtATime() async throws {
        // Its limit catches a hang of the gate; the suite's blocking tests must not spend it (`onOwnThread`).
        try await onOwnThread { try await Self.fitAndOneAtATime() }
    }

    static func fitAndOneAtATime() async throws {
        let gate = MemoryGate(budget: MemoryBudget(bytes: 100 * Self.mebibyte, origin: .option))
        // Two jobs of 40 MiB fit together: the first waits inside the gate until the second has started too (if
        // the gate held it back, this would never end).
        let second = AsyncStream<Void>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { () async throws -> Void in
                try await gate.run(holding: 40 * Self.mebibyte) { for await _ in second.stream { break } }
            }
            group.addTask { () async throws -> Void in
                _ = try await gate.run(holding: 40 * Self.mebibyte) { second.continuation.yield() }
            }
            try await group.waitForAll()
        }
        #expect(gate.inUse == 0)

        // Jobs of 60 MiB, and one of 150 (above the budget): never two at once, and the large one runs too.
        let overlap = Overlap()
        let sizes: [Int64] = [60, 60, 150, 60, 60, 60]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for size in sizes {
                group.addTask { () async throws -> Void in
                    try await gate.run(holding: size * Self.mebibyte) {
                        overlap.enter(gate)
                        await Task.yield()
                        overlap.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(overlap.most == 1, "jobs over the budget together: \(overlap.heldBesideOthers >> 20) MiB")
        #expect(gate.inUse == 0)
    }

    @Test(.timeLimit(Self.hangLimit))
    func aJobCancelledWhileItWaitsHoldsNothingAndTheNextGetsItsRoom() async throws {
        // Its limit catches a hang of the gate; the suite's blocking tests must not spend it (`onOwnThread`).
        try await onOwnThread { executor in try await Self.cancelledWaiterHoldsNothing(on: executor) }
    }

    static func cancelledWaiterHoldsNothing(on executor: any TaskExecutor) async throws {
        let gate = MemoryGate(budget: MemoryBudget(bytes: 100 * Self.mebibyte, origin: .option))
        let release = AsyncStream<Void>.makeStream()
        let holding = AsyncStream<Void>.makeStream()
        let holder = Task(executorPreference: executor) {
            try await gate.run(holding: 90 * Self.mebibyte) {
                holding.continuation.yield()
                for await _ in release.stream { break }
            }
        }
        for await _ in holding.stream { break }
        let waiter = Task(executorPreference: executor) { try await gate.run(holding: 50 * Self.mebibyte) { "ran" } }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        release.continuation.yield()
        try await holder.value
        #expect(gate.inUse == 0)
        #expect(try await gate.run(holding: 50 * Self.mebibyte) { "ran" } == "ran")
    }

    @Test func aJobAboveTheKernelLimitIsRefusedBeforeItStarts() async throws {
        let gate = MemoryGate(budget: MemoryBudget(bytes: 300 * Self.mebibyte, hardLimit: 384 * Self.mebibyte,
                                                   origin: .cgroup("memory.limit_in_bytes")))
        let ran = Locked(false)
        await #expect(throws: MemoryRefusal.self) {
            try await gate.run(holding: 900 * Self.mebibyte) { ran.withLock { $0 = true } }
        }
        #expect(!ran.withLock { $0 })
        #expect(gate.inUse == 0)
    }

    /// A real job on a real photo, through `DerivativeJobs` as `cairn worker` runs it.
    @Test func aWorkersJobIsAdmittedByTheProbesEstimateOrFailsWithItsMemoryReason() async throws {
        let folder = try TemporaryDirectory(prefix: "cairn-worker-memory")
        let layout = LibraryLayout(root: folder.path)
        let checksum = try #require(Checksum(hex: String(repeating: "ab", count: 20)))
        let original = layout.originalRelativePath(checksum, fileExtension: "jpg")
        try FileSystem.makeDirectories(FileSystem.parentDirectory(of: layout.absolute(original)))
        try MediaFixtures.jpeg(at: layout.absolute(original), width: 3000, height: 2000)
        let job = DerivativeJob(original: original, kind: .photo, name: "IMG_1.JPG")
        let lease = Lease(job: 1, token: UUID(), work: QueuedWork(library: "l", checksum: checksum.hex, kind: .thumbnail,
                                                                  payload: job.payload), attempt: 1)

        // Its estimate, from a probe of the original: what the import's metadata phase would have found.
        let estimate = try await DerivativeJobs.estimate(
            ImportItem(relativePath: "IMG_1.JPG", sourceRoot: "", kind: .photo, byteCount: 0, checksum: checksum),
            in: .thumbnail, original: layout.absolute(original), media: MediaEngine())
        #expect(estimate > 4 * Self.mebibyte && estimate < 128 * Self.mebibyte, "\(estimate)")

        // A cgroup that leaves less than that: refused with its reason, not retried, nothing written.
        // (The default engine: budgets this small are below the least a run may be given, and would hold the still
        // files it reads whole under half of them.)
        let tight = DerivativeJobs(layout: layout, media: MediaEngine(), memory: MemoryBudget(bytes: estimate / 2, hardLimit: estimate / 2,
                                                                         origin: .cgroup("memory.max")))
        do {
            _ = try await tight.run(lease)
            Issue.record("a job above the hard limit ran")
        } catch let failure as JobFailure {
            #expect(!failure.isRetryable && failure.category == .memory, "\(failure)")
            #expect(failure.reason.contains("of memory"), "\(failure.reason)")
        }
        #expect(!FileManager.default.fileExists(atPath: layout.absolute(layout.derivedRelativePath(checksum, suffix: "preview.jpg"))))

        // A budget below the estimate without a hard limit: the job runs alone, and makes its files.
        let small = DerivativeJobs(layout: layout, media: MediaEngine(), memory: MemoryBudget(bytes: estimate / 2, origin: .option))
        let output = try #require(DerivativeOutput(result: try await small.run(lease)))
        #expect(output.files.count == 2, "\(output.files)")
        #expect(small.memoryInUse == 0)
    }

    @Test func aBudgetBelowTheLeastIsAUsageError() async throws {
        let result = try await BlockingPool.run {
            try CairnBinary.run(["worker", "--queue", "postgres:///nowhere?host=/nonexistent", "--library", "/nonexistent",
                                 "--memory", "100M"])
        }
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.contains("--memory: 100M is below the least a run needs"), "\(result.standardError)")
    }
}

/// `cairn tape build` under a memory budget: its lanes held to what the budget has room for.
@Suite struct TapeMemoryTests {
    @Test func aTapesLanesAreHeldToWhatTheBudgetHasRoomFor() {
        let asked = TapeBuildSettings(lanes: 8)
        let perLane = TapeClipEncoder.estimatedPeak(threads: 3)
        let roomy = TapeBuildSettings.within(MemoryBudget(bytes: 12 << 30, origin: .physicalMemory), asked, cores: 2)
        #expect(roomy.lanes == 8 && roomy.media == MediaConfiguration())
        let three = TapeBuildSettings.within(MemoryBudget(bytes: perLane * 3 + perLane / 2, origin: .option), asked, cores: 2)
        #expect(three.lanes == 3)
        // Below one lane's estimate, one lane still runs: the least a tape needs.
        let tight = TapeBuildSettings.within(MemoryBudget(bytes: 128 << 20, hardLimit: 128 << 20, origin: .cgroup("memory.max")),
                                             asked, cores: 2)
        #expect(tight.lanes == 1 && tight.media.clipEncoderThreads == 1 && tight.media.maxDecodeBytes == 64 << 20)
    }
}
