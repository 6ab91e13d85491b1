import CairnTesting
import Foundation
import Testing

/// Issue 65, item 4: `--exclude`, `--kind`, `--since`, `--until` narrow what a run brings in; a file they leave out
/// is skipped with its reason and is never taken for gone.
@Suite struct ImportFilterTests {
    static func exif(_ date: String) -> ExifFields {
        var fields = ExifFields()
        fields.dateTimeOriginal = date
        return fields
    }

    @Test func filtersNarrowARunAndWhatTheyLeaveOutIsNeverDeleted() throws {
        let folder = try TemporaryDirectory()
        let source = folder.subpath("src")
        try FileManager.default.createDirectory(atPath: source + "/skip", withIntermediateDirectories: true)
        try MediaFixtures.jpegWithExif(at: source + "/old.jpg", width: 200, exif: Self.exif("2018:05:01 12:00:00"))
        try MediaFixtures.jpegWithExif(at: source + "/new.jpg", width: 202, exif: Self.exif("2022:05:01 12:00:00"))
        try MediaFixtures.jpegWithExif(at: source + "/skip/thing.jpg", width: 204, exif: Self.exif("2022:06:01 12:00:00"))
        try MediaFixtures.jpeg(at: source + "/nodate.jpg", width: 120, height: 80)
        // No date of its own: its Takeout JSON dates it.
        try MediaFixtures.jpeg(at: source + "/scan.jpg", width: 122, height: 80)
        try #"{"title": "scan.jpg", "photoTakenTime": {"timestamp": "1688212800"}}"#
            .write(toFile: source + "/scan.jpg.json", atomically: true, encoding: .utf8)
        try MediaFixtures.video(at: source + "/clip.mp4", seconds: 0.5)
        try MediaFixtures.video(at: source + "/IMG_1.MOV", width: 160, height: 90, seconds: 0.5)
        let library = folder.subpath("lib")
        let filters = ["--since", "2020-01-01", "--until", "2024-01-01", "--kind", "photo", "--exclude", "skip/*",
                       "--exclude", "*.mov"]
        let report = folder.subpath("report.ndjson")
        let first = try CairnBinary.run(["import", source, "--library", library, "--plain", "--clips", "off", "--report", report]
                                        + filters)
        #expect(first.status == 0, "\(first.standardOutput)\(first.standardError)")
        #expect(first.standardOutput.contains("new          2"), "\(first.standardOutput)")
        #expect(first.standardOutput.contains("skipped      5  (0 not media, 0 symbolic links, 2 excluded, 1 not photos, 2 outside --since/--until)"),
                "\(first.standardOutput)")
        var reasons: [String: String] = [:]
        for line in try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            reasons[object["path"] as? String ?? ""] = object["outcome"] as? String == "skipped" ? object["reason"] as? String : "imported"
        }
        #expect(reasons["new.jpg"] == "imported" && reasons["scan.jpg"] == "imported", "\(reasons)")
        #expect(reasons["old.jpg"] == "taken 2018-05-01T12:00:00Z, before --since 2020-01-01T00:00:00Z", "\(reasons)")
        #expect(reasons["nodate.jpg"]?.hasPrefix("capture time unknown") == true, "\(reasons)")
        #expect(reasons["clip.mp4"] == "not a photo (--kind photo)", "\(reasons)")
        #expect(reasons["skip/thing.jpg"] == "excluded by --exclude skip/*", "\(reasons)")
        #expect(reasons["IMG_1.MOV"] == "excluded by --exclude *.mov", "any case: \(reasons)")

        func sync(_ extra: [String]) throws -> CairnBinary.Result {
            let result = try CairnBinary.run(["sync", source, "--library", library, "--plain", "--clips", "off"] + extra)
            #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
            let pending = try CairnBinary.run(["pending", "list", "--library", library])
            #expect(pending.standardOutput.contains("0 pending"), "nothing left out is taken for gone: \(pending.standardOutput)")
            return result
        }
        _ = try sync(filters)
        // Without filters, the rest comes in; filtering everything out afterwards deletes nothing.
        let all = try sync([])
        #expect(all.standardOutput.contains("5 new") || all.standardOutput.contains("new          5"), "\(all.standardOutput)")
        let listed = try CairnBinary.run(["ls", "--library", library, "--json"])
        #expect(listed.standardOutput.split(separator: "\n").count == 7, "\(listed.standardOutput)")
        _ = try sync(["--exclude", "*"])
        _ = try sync(["--kind", "video", "--until", "1990-01-01"])
        #expect(try CairnBinary.run(["ls", "--library", library, "--json"]).standardOutput.split(separator: "\n").count == 7)
    }

    @Test func filtersThatCannotBeMetAreRefusedBeforeAnythingRuns() throws {
        let folder = try TemporaryDirectory()
        for (arguments, words) in [(["--kind", "photos"], "--kind must be photo or video"),
                                   (["--since", "2024-02-30x"], "--since 2024-02-30x: not a date"),
                                   (["--since", "2024-01-01", "--until", "2023-01-01"], "--since must be before --until"),
                                   (["--exclude", " "], "--exclude needs a pattern")] {
            let result = try CairnBinary.run(["import", folder.path, "--library", folder.subpath("lib")] + arguments)
            #expect(result.status == 64 && result.standardError.contains(words), "\(arguments): \(result.standardError)")
            #expect(!FileManager.default.fileExists(atPath: folder.subpath("lib")))
        }
    }
}
