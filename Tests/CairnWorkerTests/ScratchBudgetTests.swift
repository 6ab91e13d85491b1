import CairnStages
import Testing

/// Copies of archive entries (an Immich upload's, a filter's probe) share 64 MB of scratch, and a larger one is made
/// alone: the scratch an import needs is its largest entry plus the allowance at most, whatever the lanes.
@Suite struct ScratchBudgetTests {
    @Test func theRuleLetsSmallCopiesShareAndALargeOneAlone() {
        #expect(ScratchBudget.admits(40, besides: 0, allowance: 64))
        #expect(ScratchBudget.admits(24, besides: 40, allowance: 64))
        #expect(!ScratchBudget.admits(30, besides: 40, allowance: 64))
        #expect(ScratchBudget.admits(2_000, besides: 0, allowance: 64))
        #expect(!ScratchBudget.admits(1, besides: 2_000, allowance: 64))
    }

    @Test func aLargeCopyWaitsForTheOthersToGoThenHoldsTheScratchAlone() async throws {
        let budget = ScratchBudget(allowance: 64)
        try await budget.acquire(40)
        try await budget.acquire(20)
        #expect(budget.inUse == 60)
        let large = Task { () async throws -> Int64 in
            try await budget.acquire(2_000)
            return budget.inUse
        }
        budget.release(40)
        budget.release(20)
        #expect(try await large.value == 2_000, "admitted only once the others gave their bytes back")
        let small = Task { () async throws -> Int64 in
            try await budget.acquire(1)
            return budget.inUse
        }
        budget.release(2_000)
        #expect(try await small.value == 1)
        budget.release(1)
        #expect(budget.inUse == 0)
    }
}
