import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// The stores the contract suite runs on: the folder, and S3 on the suite's SeaweedFS (`TestS3`).
enum StoreBackend: String, CaseIterable, CustomTestStringConvertible {
    case folder, s3

    var testDescription: String { rawValue }

    /// A fresh, empty store of this kind, given to `body` and closed after it.
    func withStore(_ body: (any ObjectStore) async throws -> Void) async throws {
        switch self {
        case .folder:
            let folder = try TemporaryDirectory()
            try await body(FolderStore(root: folder.subpath("store")))
        case .s3:
            let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: try TestS3.environment())
            let store = try S3Store(settings: settings)
            do {
                try await body(store)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }
}

/// Files to put: each a temporary file with the given bytes.
final class SourceFiles {
    let folder: TemporaryDirectory
    private var count = 0

    init() throws { folder = try TemporaryDirectory() }

    func file(_ bytes: [UInt8]) throws -> String {
        count += 1
        return try folder.write(Data(bytes), to: "source-\(count)")
    }
}

/// `count` bytes that differ from any other call's (a counter mixed in).
func distinctBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var generator = SplitMix64(seed: seed)
    return (0 ..< count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
}
