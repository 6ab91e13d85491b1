import CairnCatalog
import CairnCore
import Foundation

/// Finds stacks among the library's stills (`StackRules`): the stills in no stack yet are read by capture time, a
/// page at a time, and cut where two shots are more than a few seconds apart; each cluster is one question to the
/// rules, so a library of millions is never held.
public enum AssetStacking {
    /// The gap that ends a cluster: more than any rule lets apart within one stack.
    static let clusterGap = 5.0
    /// A cluster is handed over at this size even without a gap (thousands of stills with one date, as a scanner
    /// or a wrong clock writes them).
    static let largestCluster = 4096

    /// Stacks what can be stacked, saves the stacks and returns them.
    @discardableResult
    public static func stack(catalog: any AssetLinkCatalog, now: Date) async throws -> [AssetStack] {
        var found: [AssetStack] = []
        var cluster: [StackCandidate] = []
        func close() {
            if cluster.count >= 2 { found += StackRules.stacks(among: cluster, at: now) }
            cluster.removeAll(keepingCapacity: true)
        }
        var last: StackCandidate.Position?
        while case let page = try await catalog.unstackedStills(after: last, limit: 4096), let end = page.last {
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
}
