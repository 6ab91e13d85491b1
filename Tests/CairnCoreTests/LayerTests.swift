import Foundation
import Testing

/// The dependency rule Package.swift states (`layers`, `forbiddenImports`), checked against every `import` line
/// under Sources/: a target imports only targets of lower layers.
@Suite struct LayerTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The quoted names of each inner list of `let layers`, and the pairs of `forbiddenImports`.
    static func declaredRule() throws -> (layers: [[String]], forbidden: [(String, String)]) {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        func quoted(_ text: Substring) -> [String] {
            text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 1 }.map { String($0.element) }
        }
        guard let start = manifest.range(of: "let layers: [[String]] = ["),
              let end = manifest.range(of: "\n]\n", range: start.upperBound..<manifest.endIndex),
              let forbiddenStart = manifest.range(of: "let forbiddenImports"),
              let forbiddenEnd = manifest.range(of: "\n", range: forbiddenStart.upperBound..<manifest.endIndex) else {
            throw LayerRuleMissing()
        }
        let layers = manifest[start.upperBound..<end.lowerBound].split(separator: "\n")
            .filter { $0.trimmingCharacters(in: .whitespaces).hasPrefix("[") }
            .map { quoted($0) }
        let names = quoted(manifest[forbiddenStart.upperBound..<forbiddenEnd.lowerBound])
        let forbidden = stride(from: 0, to: names.count - 1, by: 2).map { (names[$0], names[$0 + 1]) }
        return (layers, forbidden)
    }

    struct LayerRuleMissing: Error {}

    @Test func everyImportPointsToALowerLayer() throws {
        let (layers, forbidden) = try Self.declaredRule()
        #expect(layers.count >= 3, "\(layers)")
        var layerOf: [String: Int] = [:]
        for (index, names) in layers.enumerated() { for name in names { layerOf[name] = index } }
        let sources = Self.root.appendingPathComponent("Sources")
        let targets = try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted()
        var breaks: [String] = []
        for target in targets {
            guard let own = layerOf[target] else {
                breaks.append("\(target): not in Package.swift's layers")
                continue
            }
            let folder = sources.appendingPathComponent(target)
            for file in FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []
            where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") where line.hasPrefix("import ") || line.hasPrefix("@testable import ") {
                    let module = String(line.split(separator: " ").last ?? "")
                    guard let other = layerOf[module] else { continue }  // C shims and packages
                    if other >= own { breaks.append("\(target)/\(file): imports \(module) (layer \(other), its own is \(own))") }
                    if forbidden.contains(where: { $0.0 == target && $0.1 == module }) {
                        breaks.append("\(target)/\(file): imports \(module), which it must never reach")
                    }
                }
            }
        }
        #expect(breaks.isEmpty, "\(breaks.joined(separator: "\n"))")
    }

    /// The rule is read from the manifest as written, not an empty list that nothing could break.
    @Test func theRuleReadsTheManifest() throws {
        let (layers, forbidden) = try Self.declaredRule()
        #expect(layers.first == ["CairnCore"])
        #expect(layers.contains { $0.contains("CairnCatalog") && $0.contains("CairnReconcile") },
                "storage and the reconciliation engine share a layer, so neither may import the other")
        #expect(forbidden.contains { $0 == ("cairn", "CairnCatalog") })
    }

    /// One lock type, `Locked` (a pthread mutex): `Synchronization.Mutex` is a futex ThreadSanitizer cannot see, so
    /// `scripts/sanitize thread` reports every access under it as a race and could not see a real one. A test's own
    /// recorder under a `Mutex` was reported so; this keeps the rule for Sources and Tests alike.
    @Test func noSwiftFileLocksWithSynchronizationsMutex() throws {
        var found: [String] = []
        for folder in ["Sources", "Tests"] {
            let base = Self.root.appendingPathComponent(folder)
            let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            #expect(files.count > 20, "\(folder): \(files.count) Swift files")
            for file in files where file.lastPathComponent != "LayerTests.swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                    && (line.contains("Mutex<") || line.contains("Mutex(")) {
                    found.append("\(file.path.dropFirst(Self.root.path.count + 1)):\(number + 1)")
                }
            }
        }
        #expect(found.isEmpty, "Synchronization.Mutex in: \(found)")
    }
}
