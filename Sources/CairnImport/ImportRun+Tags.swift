import CairnCatalog
import CairnCore
import Foundation

extension ImportRun {
    /// The tags this run gives its new assets: `--tag`'s, and `--session-tag`'s `cairn/import/2026-11-28T1530`
    /// (its start in this machine's zone; no `:`, which tag paths elsewhere refuse).
    func tags(startedAt start: Date) -> [String] {
        guard options.sessionTag else { return options.tags }
        let wall = start.addingTimeInterval(TimeInterval(UTCOffset.local.seconds(at: start)))
        let minute = Timestamp.toTheSecond(wall).prefix(16).replacingOccurrences(of: ":", with: "")
        return options.tags + ["cairn/import/" + minute]
    }

    /// Tags what this run brought in (an interrupted run too: its assets are in), in the catalog and at the
    /// destination. A destination that refuses fails the run as any of its refusals does.
    func tagNewAssets(of context: Context) async throws {
        let tags = tags(startedAt: context.record.startedAt)
        guard !tags.isEmpty, options.destination.credentialsRefused == nil else { return }
        let assets = try await catalog.assets(broughtInBy: context.record.id)
        guard !assets.isEmpty else { return }
        try await catalog.tag(assets.map(\.checksum), with: tags, at: now())
        for line in try await options.destination.tag(assets, with: tags) { narrator.note(line) }
        narrator.note("tagged \(assets.count) new asset\(assets.count == 1 ? "" : "s") \(tags.joined(separator: ", "))")
    }
}
