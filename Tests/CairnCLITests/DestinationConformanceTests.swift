import CairnTesting
import Foundation
import Testing

/// The destination seam's contract, as one suite every destination passes (the library folder, an Immich server
/// through `immich-double`): what it holds, bringing new content in once, trashing what the source deleted and
/// restoring it, and drift seen, reported and mended only when asked. A third destination gets a case here and
/// the answers to `holds`, `lose` and `isTrashed`; the expectations stay the same.
@Suite struct DestinationConformanceTests {
    enum Destination: String, CaseIterable, CustomTestStringConvertible {
        case library, immich
        var testDescription: String { rawValue }
    }

    /// One destination under test with a source folder of its own.
    final class Harness {
        let destination: Destination
        let folder: TemporaryDirectory
        let immich: ImmichDestinationTests.Fixture?
        var source: String { immich?.source ?? folder.subpath("src") }
        var library: String { immich?.library ?? folder.subpath("lib") }

        init(_ destination: Destination) throws {
            self.destination = destination
            folder = try TemporaryDirectory()
            immich = destination == .immich ? try ImmichDestinationTests.Fixture() : nil
            try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        }

        /// `cairn COMMAND …` against this destination, as NDJSON events (stdout) and the result.
        func cairn(_ arguments: [String]) throws -> CairnBinary.Result {
            if let immich { return try immich.cairn(arguments) }
            return try CairnBinary.run(arguments + ["--library", library])
        }

        func sync(_ extra: [String] = []) throws -> (result: CairnBinary.Result, events: [[String: Any]]) {
            let result = try cairn(["sync", source, "--json"] + extra)
            let events = result.standardOutput.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
            return (result, events)
        }

        func write(_ count: Int) throws -> [String: String] {
            var sha1: [String: String] = [:]
            for index in 0..<count {
                let name = "C\(index).JPG"
                try DistinctJPEG.data(byteCount: 3_000 + index, seed: UInt8(index))
                    .write(to: URL(fileURLWithPath: source + "/" + name))
                sha1[name] = String(String(decoding: try ExternalTool.run(["sha1sum", source + "/" + name]), as: UTF8.self).prefix(40))
            }
            return sha1
        }

        /// Whether the destination shows the content (in place, not in a trash).
        func holds(_ sha1: String) async throws -> Bool {
            if let immich {
                return try await immich.double.state().assets(withChecksum: sha1).contains { !$0.isTrashed }
            }
            return FileManager.default.fileExists(atPath: "\(library)/originals/\(sha1.prefix(2))/\(sha1).jpg")
        }

        /// Whether the destination keeps the content in its trash, restorable.
        func isTrashed(_ sha1: String) async throws -> Bool {
            if let immich {
                return try await immich.double.state().assets(withChecksum: sha1).contains { $0.isTrashed }
            }
            let trash = (FileManager.default.enumerator(atPath: library + "/trash")?.allObjects as? [String]) ?? []
            return trash.contains { $0.hasSuffix("/\(sha1).jpg") }
        }

        /// Someone loses the content at the destination for good, behind cairn's back (Immich: deleted and its
        /// trash emptied; the library: the original removed from the folder).
        func lose(_ sha1: String) async throws {
            if let immich {
                let ids = try await immich.double.state().assets(withChecksum: sha1).map(\.id)
                try await immich.double.purge(assetIDs: ids)
                return
            }
            try FileManager.default.removeItem(atPath: "\(library)/originals/\(sha1.prefix(2))/\(sha1).jpg")
        }
    }

    static func event(_ name: String, in events: [[String: Any]]) -> [String: Any]? {
        events.last { $0["event"] as? String == name }
    }

    static func counts(_ events: [[String: Any]]) -> [String: Any] {
        (event("runEnd", in: events)?["counts"] as? [String: Any]) ?? [:]
    }

    @Test(arguments: Destination.allCases)
    func newContentIsBroughtInOnceAndASecondSyncBringsNothing(_ destination: Destination) async throws {
        let harness = try Harness(destination)
        let sha1 = try harness.write(3)
        let first = try harness.sync()
        #expect(first.result.status == 0, "\(first.result.standardError)")
        for (name, sum) in sha1 { #expect(try await harness.holds(sum), "\(name)") }
        #expect(Self.counts(first.events)["new"] as? Int == 3, "\(Self.counts(first.events))")
        let second = try harness.sync()
        #expect(second.result.status == 0)
        #expect(Self.counts(second.events)["new"] as? Int == 0, "\(Self.counts(second.events))")
        #expect(Self.counts(second.events)["bytesCopied"] as? Int ?? 0 == 0)
    }

    @Test(arguments: Destination.allCases)
    func aDeletionAtTheSourceReachesTheTrashAndARestoreBringsItBack(_ destination: Destination) async throws {
        let harness = try Harness(destination)
        let sha1 = try harness.write(4)
        #expect(try harness.sync().result.status == 0)
        try FileManager.default.removeItem(atPath: harness.source + "/C0.JPG")
        _ = try harness.sync(["--apply-deletions"])
        let trashing = try harness.sync(["--apply-deletions", "--quarantine-days", "0"])
        #expect(trashing.result.status == 0, "\(trashing.result.standardError)")
        let gone = try #require(sha1["C0.JPG"])
        #expect(try await !harness.holds(gone))
        #expect(try await harness.isTrashed(gone), "restorable, never purged")
        for (name, sum) in sha1 where name != "C0.JPG" { #expect(try await harness.holds(sum), "\(name)") }

        let runID = try #require(Self.event("runStart", in: trashing.events)?["runId"] as? String)
        let restore = try harness.cairn(["restore", "--run-id", runID])
        #expect(restore.status == 0, "\(restore.standardOutput)\(restore.standardError)")
        #expect(try await harness.holds(gone))
        #expect(try await !harness.isTrashed(gone))
    }

    @Test(arguments: Destination.allCases)
    func driftIsReportedLeftAloneAndMendedOnlyWhenAsked(_ destination: Destination) async throws {
        let harness = try Harness(destination)
        let sha1 = try harness.write(3)
        #expect(try harness.sync().result.status == 0)
        let lost = try #require(sha1["C1.JPG"])
        try await harness.lose(lost)

        let checked = try harness.sync(["--check-destination"])
        #expect(checked.result.status == 0, "\(checked.result.standardError)")
        let drift = try #require(Self.event("destinationChecked", in: checked.events)?["drift"] as? [String: Any])
        #expect(drift["check"] as? String == "full" && drift["missing"] as? Int == 1, "\(drift)")
        #expect(try await !harness.holds(lost), "left alone by default")
        // Reported again by the next run, still left alone.
        let next = try harness.sync()
        #expect(try #require(Self.event("destinationChecked", in: next.events)?["drift"] as? [String: Any])["missing"] as? Int == 1)
        #expect(try await !harness.holds(lost))

        let mended = try harness.sync(["--destination-drift", "restore"])
        #expect(mended.result.status == 0, "\(mended.result.standardError)")
        let mending = try #require(Self.event("destinationChecked", in: mended.events)?["drift"] as? [String: Any])
        #expect(mending["broughtInAgain"] as? Int == 1 && mending["missing"] as? Int == 0, "\(mending)")
        #expect(try await harness.holds(lost))
        let clean = try harness.sync(["--check-destination"])
        let after = try #require(Self.event("destinationChecked", in: clean.events)?["drift"] as? [String: Any])
        #expect(after["missing"] as? Int == 0 && after["trashed"] as? Int == 0, "\(after)")
    }
}
