import CairnTesting
import Foundation
import Testing

/// The fuzz targets' findings (Tests/Fixtures/fuzz/TARGET) and every committed still, replayed through the
/// plain build of `cairn-fuzz`: each is read as its target reads fuzz input, and none may crash it.
@Suite(.timeLimit(.minutes(2))) struct FuzzRegressionTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path

    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { !$0.hasSuffix(".md") }.sorted().map { folder + "/" + $0 }
    }

    @Test(arguments: ["exif", "probe", "thumbnail"])
    func findingsAndStillsGoThroughTheTargetWithoutACrash(target: String) throws {
        let inputs = Self.files(in: Self.fixtures + "/fuzz/" + target) + Self.files(in: Self.fixtures + "/stills")
        #expect(inputs.count >= 10)
        let finished = try CairnBinary.run([target] + inputs, product: "cairn-fuzz")
        let output = finished.standardOutput + finished.standardError
        #expect(finished.status == 0, "\(output)")
        #expect(output.contains("\(inputs.count) inputs through \(target), no crash"))
    }
}
