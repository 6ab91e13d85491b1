import CairnCatalog
import CairnCore
import Foundation

/// Finds stacks among the library's stills (`StackRules`): the dated stills are read by capture time, a page at a
/// time, and cut where two shots are more than a few seconds apart; each cluster that holds a still in no stack yet
/// is one question to the rules, so a library of millions is never held. Stills stacked by an earlier run are in the
/// question too: a burst whose last frames arrive in a later run grows the stack made of its first ones (which the
/// catalog then replaces whole, and the destination makes again), instead of making a second stack.
public enum AssetStacking {
    /// The gap that ends a cluster: more than any rule lets apart within one stack.
    static let clusterGap = 5.0
    /// A cluster is handed over at this size even without a gap (thousands of stills with one date, as a scanner
    /// or a wrong clock writes them).
    static let largestCluster = 4096

    /// Stacks what can be stacked, saves the stacks and returns them (new ones and grown ones).
    @discardableResult
    public static func stack(catalog: any AssetLinkCatalog, now: Date) async throws -> [AssetStack] {
        var found: [AssetStack] = []
        var cluster: [StackCandidate] = []
        func close() {
            found += stacks(among: cluster, at: now)
            cluster.removeAll(keepingCapacity: true)
        }
        var last: StackCandidate.Position?
        while case let page = try await catalog.stackCandidates(after: last, limit: 4096), let end = page.last {
            for still in page {
                if let previous = cluster.last,
                   still.captureDate.timeIntervalSince(previous.captureDate) > clusterGap || cluster.count >= largestCluster {
                    close()
                }
                cluster.append(still)
            }
            last = end.position
        }
        close()
        try await catalog.saveStacks(found)
        return found
    }

    /// What the rules make of one cluster that is new: only stacks with a still in no stack yet (the others were made
    /// before), and, of those, only ones that take in whole every stack they touch (a stack is grown, never split).
    static func stacks(among cluster: [StackCandidate], at now: Date) -> [AssetStack] {
        guard cluster.count >= 2, cluster.contains(where: { $0.stackPrimary == nil }) else { return [] }
        let stackOf = Dictionary(cluster.map { ($0.checksum, $0.stackPrimary) }, uniquingKeysWith: { first, _ in first })
        var membersOf: [Checksum: Set<Checksum>] = [:]
        for still in cluster { if let primary = still.stackPrimary { membersOf[primary, default: []].insert(still.checksum) } }
        return StackRules.stacks(among: cluster, at: now).filter { stack in
            let members = Set(stack.members)
            let touched = Set(stack.members.compactMap { stackOf[$0] ?? nil })
            guard stack.members.contains(where: { (stackOf[$0] ?? nil) == nil }) else { return false }
            return touched.allSatisfy { membersOf[$0, default: []].isSubset(of: members) }
        }
    }
}
