import CairnCore
import CairnStore
import CairnTesting
import Foundation
import Testing

/// What every store promises (`ObjectStore`): whole objects written once by key, ranges, sizes, listings in the
/// bytewise order of keys, page by page, and deletion; the same tests for the folder and for S3.
@Suite struct StoreContractTests {
    @Test(arguments: StoreBackend.allCases)
    func anObjectIsWrittenOnceAndReadWholeOrByRange(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let sources = try SourceFiles()
            let bytes = distinctBytes(300_000, seed: 1)
            let key = try ObjectKey("originals/ab/cdef.jpg")
            #expect(try await store.size(of: key) == nil)
            #expect(try await store.put(key, fromFile: try sources.file(bytes)) == .created)
            #expect(try await store.size(of: key) == Int64(bytes.count))
            #expect(try await store.read(key, range: nil) == bytes)
            #expect(try await store.read(key, range: 1000 ..< 5000) == Array(bytes[1000 ..< 5000]))
            // A range past the end is cut at the end; one that starts there reads nothing.
            #expect(try await store.read(key, range: 299_990 ..< 400_000) == Array(bytes[299_990...]))
            #expect(try await store.read(key, range: 300_000 ..< 300_010) == [])
            // A second put of the key keeps the first object: the bytes a later writer brings are not written.
            #expect(try await store.put(key, fromFile: try sources.file([1, 2, 3])) == .alreadyThere)
            #expect(try await store.read(key, range: nil) == bytes)
            // An empty object is an object.
            let empty = try ObjectKey("derived/empty")
            #expect(try await store.put(empty, fromFile: try sources.file([])) == .created)
            #expect(try await store.size(of: empty) == 0)
            #expect(try await store.read(empty, range: nil) == [])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func bytesInMemoryAreWrittenOnceAsAFileIs(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let bytes = distinctBytes(70_000, seed: 3)
            let key = try ObjectKey("originals/cd/from-memory.jpg")
            #expect(try await store.put(key, bytes: bytes) == .created)
            #expect(try await store.read(key, range: nil) == bytes)
            #expect(try await store.put(key, bytes: [9, 9]) == .alreadyThere)
            #expect(try await store.size(of: key) == Int64(bytes.count))
            let empty = try ObjectKey("derived/cd/empty")
            #expect(try await store.put(empty, bytes: []) == .created)
            #expect(try await store.size(of: empty) == 0)
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func eightRacingWritersOfOneKeyLeaveOneCompleteObject(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let sources = try SourceFiles()
            let bytes = distinctBytes(2_000_000, seed: 2)
            let files = try (0 ..< 8).map { _ in try sources.file(bytes) }
            let key = try ObjectKey("originals/12/3456789")
            let outcomes = try await withThrowingTaskGroup(of: PutOutcome.self) { group in
                for file in files { group.addTask { try await store.put(key, fromFile: file) } }
                return try await group.reduce(into: [PutOutcome]()) { $0.append($1) }
            }
            // Both stores refuse a second creation (the folder by `link`, SeaweedFS by `If-None-Match: *`): exactly
            // one writer's upload made the object.
            #expect(outcomes.count(where: { $0 == .created }) == 1)
            #expect(outcomes.count(where: { $0 == .alreadyThere }) == 7)
            #expect(try await store.read(key, range: nil) == bytes)
            #expect(try await store.list(prefix: "", after: nil, limit: 10).map(\.key) == [key])
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aListingPagesThroughKeysInTheirBytesOrder(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let sources = try SourceFiles()
            let file = try sources.file([7])
            // Names that sort differently by bytes than by folders or by Unicode: `a-b` before `a/b` ('-' < '/'),
            // upper case before lower, a decomposed é (e + U+0301) before a precomposed one; spaces and `+`, which
            // a URL encodes.
            var texts = ["a/b", "a-b", "a0", "A/x", "e\u{301}/1", "\u{e9}/1", "space name/+plus", "z"]
            for index in 0 ..< 600 { texts.append("bulk/\(index % 7)/item-\(index)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (offset, chunk) in stride(from: 0, to: texts.count, by: 76).enumerated() {
                    let slice = Array(texts[chunk ..< min(chunk + 76, texts.count)])
                    _ = offset
                    group.addTask { for text in slice { _ = try await store.put(try ObjectKey(text), fromFile: file) } }
                }
                try await group.waitForAll()
            }
            // AWS (and MinIO, and the folder store) list keys bytewise. SeaweedFS (4.48) walks its file tree, listing
            // a folder's keys as one run: `a/b` before `a-b`. The two orders differ only where a file and a folder
            // share a prefix followed by a byte below `/`, which the library's layout (fixed-width hex names)
            // never has; both are accepted from S3, and each page must go on where the last ended.
            let bytewise = texts.sorted { PathOrder.precedes($0, $1) }
            let tree = texts.sorted { PathOrder.precedes($0.replacingOccurrences(of: "/", with: "\u{1}"),
                                                         $1.replacingOccurrences(of: "/", with: "\u{1}")) }
            let orders = backend == .s3 ? [bytewise, tree] : [bytewise]
            var listed: [String] = []
            var after: ObjectKey?
            var pages = 0
            while true {
                let page = try await store.list(prefix: "", after: after, limit: 97)
                #expect(page.count <= 97)
                guard let last = page.last else { break }
                listed += page.map(\.key.text)
                #expect(page.allSatisfy { $0.size == 1 })
                after = last.key
                pages += 1
            }
            #expect(orders.contains(listed))
            #expect(pages == (texts.count + 96) / 97)
            // A prefix that ends inside a name, and one that names a folder.
            let bulk3 = try await store.list(prefix: "bulk/3/", after: nil, limit: 1000).map(\.key.text)
            #expect(bulk3 == bytewise.filter { $0.hasPrefix("bulk/3/") })
            let partial = try await store.list(prefix: "a", after: nil, limit: 1000).map(\.key.text)
            #expect(orders.map { $0.filter { $0.hasPrefix("a") } }.contains(partial))
        }
    }

    @Test(arguments: StoreBackend.allCases)
    func aDeletedObjectIsGoneAndAMissingOneIsNoError(_ backend: StoreBackend) async throws {
        try await backend.withStore { store in
            let sources = try SourceFiles()
            let key = try ObjectKey("derived/thumb/1.webp")
            _ = try await store.put(key, fromFile: try sources.file([1, 2, 3]))
            try await store.delete(key)
            #expect(try await store.size(of: key) == nil)
            try await store.delete(key)
            await #expect(throws: StoreError.self) { _ = try await store.read(key, range: nil) }
            do throws(StoreError) {
                _ = try await store.read(key, range: nil)
            } catch {
                #expect(error.kind == .missingObject || error.kind == .system(.notFound))
                #expect(error.category == .notFound)
            }
            #expect(try await store.list(prefix: "", after: nil, limit: 10).isEmpty)
        }
    }

    @Test func keysThatCouldLeaveTheStoreOrMeanTwoObjectsAreRefused() {
        for text in ["", "/abs", "a//b", "a/./b", "../up", "a/..", "trailing/"] {
            #expect(throws: StoreError.self, "\(text)") { try ObjectKey(text) }
        }
        #expect((try? ObjectKey("originals/ab/c d+e.jpg")) != nil)
    }
}
