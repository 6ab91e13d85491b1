import CairnCatalog
import CairnCore
import Foundation

/// A derivative job as the queue carries it (JSON in its payload): the original to render, what it is, and the
/// name messages give it. The job's key (library, checksum, kind) is the queue's own.
struct DerivativeJob: Codable, Equatable {
    /// The original, relative to the library's root.
    var original: String
    var kind: MediaKind
    /// The file's path in its source, for messages.
    var name: String

    /// The same job is always the same text: the queue compares payloads to let a done job stand for the work.
    var payload: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }
}

extension DerivativeJob {
    init?(payload: String) {
        guard let job = try? JSONDecoder().decode(Self.self, from: Data(payload.utf8)) else { return nil }
        self = job
    }
}

/// What a derivative job made (JSON in the queue's result), until the import that waits for it records it in its
/// catalog: the files, already synced in place under the library, or why the content is kept without them.
struct DerivativeOutput: Codable, Equatable {
    var files: [DerivedFileRecord] = []
    /// Media cairn recognises but cannot render here: kept, byte-identical, with this reason.
    var keptWithoutPreview: String?

    init(_ rows: StageRows?) {
        files = rows?.derivedFiles ?? []
        keptWithoutPreview = rows?.keptWithoutPreview.first?.reason
    }

    init?(result: String) {
        guard let output = try? JSONDecoder().decode(Self.self, from: Data(result.utf8)) else { return nil }
        self = output
    }

    var result: String { String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

    /// The catalog's rows for `checksum`'s content (the files name their own; a result for other content is none).
    func rows(for checksum: Checksum) -> StageRows {
        StageRows(derivedFiles: files.filter { $0.checksum == checksum },
                  keptWithoutPreview: keptWithoutPreview.map { [(checksum, $0)] } ?? [])
    }
}
