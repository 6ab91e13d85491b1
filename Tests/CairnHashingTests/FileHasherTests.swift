import Dispatch
import CairnCore
import CairnTesting
import Foundation
import Glibc
import Testing

@testable import CairnHashing

@Suite struct FileHasherTests {
    /// sha1sum's answer for a file, as the reference.
    func referenceChecksum(_ path: String) throws -> Checksum {
        let output = String(decoding: try ExternalTool.run(["sha1sum", path]), as: UTF8.self)
        return try #require(Checksum(hex: output.prefix(40)))
    }

    func randomBytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// A folder on a disk file system: tmpfs pages cannot leave the page cache, so residency says nothing there.
    func diskBackedDirectory() throws -> TemporaryDirectory {
        let type = String(decoding: try ExternalTool.run(["stat", "-f", "-c", "%T", NSTemporaryDirectory()]), as: UTF8.self)
        let temporaryIsTmpfs = type.hasPrefix("tmpfs")
        return try TemporaryDirectory(prefix: "cairn-cache",
                                      in: temporaryIsTmpfs ? FileManager.default.currentDirectoryPath + "/.build" : NSTemporaryDirectory())
    }

    /// How many of the file's pages are in the page cache (`mincore` over a mapping of it).
    func residentPages(_ path: String) throws -> Int {
        let fd = open(path, O_RDONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        var info = stat()
        try #require(fstat(fd, &info) == 0)
        let length = Int(info.st_size)
        let mapping = try #require(mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0))
        defer { munmap(mapping, length) }
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        var vector = [UInt8](repeating: 0, count: (length + pageSize - 1) / pageSize)
        try #require(mincore(mapping, length, &vector) == 0)
        return vector.count { $0 & 1 == 1 }
    }

    /// A source file leaves the page cache after its copy (an import never reads it again), and after hashing
    /// when asked (a folder bigger than memory); plain hashing leaves it cached, for the copy that follows.
    @Test func sourcePagesLeaveThePageCacheAfterTheCopyAndWhenHashingIsAskedTo() throws {
        let directory = try diskBackedDirectory()
        let path = try directory.write(randomBytes(4 << 20, seed: 5), to: "source.bin")
        let written = open(path, O_RDONLY)
        try #require(written >= 0 && fsync(written) == 0)  // clean pages: the only kind the kernel can drop
        close(written)
        let hasher = try FileHasher()
        let pages = (4 << 20) / Int(sysconf(Int32(_SC_PAGESIZE)))

        _ = try hasher.hash(path: path)
        #expect(try residentPages(path) == pages, "plain hashing keeps the file cached")
        _ = try hasher.hash(path: path, dropsCache: true)
        #expect(try residentPages(path) == 0)
        let copied = try hasher.copy(from: path, to: directory.subpath("copy.bin"), syncs: true)
        #expect(copied.checksum == (try referenceChecksum(path)))
        _ = try hasher.copy(from: path, to: directory.subpath("copy2.bin"), syncs: true)
        #expect(try residentPages(path) == 0, "the source left the cache after its copy")
        #expect(try residentPages(directory.subpath("copy.bin")) == pages, "a copy stays cached for its derivatives")
    }

    @Test(arguments: [0, 1, 65_537, 256 * 1024, 256 * 1024 + 1, 3_000_001])
    func matchesSha1sum(size: Int) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(randomBytes(size, seed: UInt64(size)), to: "file.bin")
        let hashed = try FileHasher().hash(path: path)
        #expect(hashed.checksum == (try referenceChecksum(path)))
        #expect(hashed.fingerprint.size == Int64(size))
        #expect(hashed.header.count == min(size, 32))
    }

    /// Read and mapped hashing agree with sha1sum on both sides of the mapping threshold and across windows.
    @Test(arguments: [0, 511 * 1024, 512 * 1024, 16 * 1024 * 1024 + 4097])
    func mappedAndReadHashingAgree(size: Int) throws {
        let directory = try TemporaryDirectory()
        let block = randomBytes(min(size, 1 << 20), seed: 11)
        var data = Data(capacity: size)
        while data.count < size { data.append(block.prefix(size - data.count)) }
        data[data.startIndex + size / 2 ..< data.startIndex + size / 2 + min(size, 5)] = Data([1, 2, 3, 4, 5].prefix(min(size, 5)))
        let path = try directory.write(data, to: "file.bin")
        let reference = try referenceChecksum(path)
        let mapped = try FileHasher(mappingThreshold: 0).hash(path: path)
        let read = try FileHasher(mappingThreshold: nil).hash(path: path)
        #expect(mapped.checksum == reference)
        #expect(read.checksum == reference)
        #expect(mapped.header == read.header)
        #expect(mapped.header.bytes == Array(data.prefix(32)))
    }

    /// A mapped file that shrinks while it is hashed loses pages: the read of one raises SIGBUS, which the
    /// guarded digest turns into "incomplete" instead of a crash; reset, the digest works again.
    @Test func aMappingThatLostItsPagesIsReportedNotACrash() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(randomBytes(256 * 1024, seed: 12), to: "shrinking.bin")
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        defer { close(fd) }
        let length = 256 * 1024
        let mapping = try #require(mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0))
        try #require(mapping != UnsafeMutableRawPointer(bitPattern: -1))
        defer { munmap(mapping, length) }
        try #require(ftruncate(fd, 4096) == 0)

        let digest = try SHA1Digest()
        let complete = try digest.updateMapped(UnsafeRawBufferPointer(start: mapping, count: length))
        #expect(!complete)
        try digest.reset()
        #expect(try digest.updateMapped(UnsafeRawBufferPointer(start: mapping, count: 4096)))
        let expected = try SHA1Digest.checksum(of: Array(UnsafeRawBufferPointer(start: mapping, count: 4096)))
        #expect(try digest.finalize() == expected)
    }

    @Test func smallBufferStillMatches() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(randomBytes(100_000, seed: 9), to: "file.bin")
        let hashed = try FileHasher(bufferSize: 4096).hash(path: path)
        #expect(hashed.checksum == (try referenceChecksum(path)))
    }

    @Test func copyWritesIdenticalBytesAndHashesThem() throws {
        let directory = try TemporaryDirectory()
        let data = randomBytes(700_000, seed: 3)
        let source = try directory.write(data, to: "source.bin")
        let destination = directory.subpath("copy.bin")
        let hasher = try FileHasher()
        let expected = try hasher.hash(path: source).checksum
        let copied = try hasher.copy(from: source, to: destination, expected: expected)
        #expect(copied.checksum == expected)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == data)
    }

    /// A big copy reads and hashes on one thread and writes on another (`CopyPipeline`): the same bytes, the same
    /// checksum, across a size that is no whole number of chunks; a wrong expectation still leaves no file.
    @Test func pipelinedCopyWritesIdenticalBytesAndHashesThem() throws {
        let directory = try TemporaryDirectory()
        let size = Int(FileHasher.pipelinedCopyThreshold) + 3 * CopyPipeline.chunkSize + 12_345
        let data = randomBytes(size, seed: 21)
        let source = try directory.write(data, to: "source.bin")
        let hasher = try FileHasher()
        let copied = try hasher.copy(from: source, to: directory.subpath("copy.bin"), syncs: false)
        #expect(copied.checksum == (try referenceChecksum(source)))
        #expect(copied.header.bytes == Array(data.prefix(FileHeader.capacity)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.subpath("copy.bin"))) == data)
        let wrong = try #require(Checksum(hex: String(repeating: "cd", count: 20)))
        #expect(throws: HashingError.self) {
            try hasher.copy(from: source, to: directory.subpath("copy2.bin"), expected: wrong)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.subpath("copy2.bin")))
        // The hasher is whole after a pipelined copy: a plain hash agrees.
        #expect(try hasher.hash(path: source).checksum == copied.checksum)
    }

    /// Every pool thread busy, the copy's writer cannot start: the reader writes on its own instead of waiting for
    /// it (which, on a pool full of copies, would wait for ever), and the copy is still whole.
    @Test func aPipelinedCopyOnAFullPoolWritesOnItsOwn() throws {
        let directory = try TemporaryDirectory()
        let size = Int(FileHasher.pipelinedCopyThreshold) + 2 * CopyPipeline.chunkSize + 77
        let data = randomBytes(size, seed: 22)
        let source = try directory.write(data, to: "source.bin")
        let running = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        for _ in 0..<BlockingPool.threadCount {
            BlockingPool.submit {
                running.signal()
                release.wait()
            }
        }
        for _ in 0..<BlockingPool.threadCount { running.wait() }
        defer { for _ in 0..<BlockingPool.threadCount { release.signal() } }
        let copied = try FileHasher().copy(from: source, to: directory.subpath("copy.bin"), syncs: false)
        #expect(copied.checksum == (try referenceChecksum(source)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.subpath("copy.bin"))) == data)
    }

    @Test func copyWithWrongExpectationLeavesNoFile() throws {
        let directory = try TemporaryDirectory()
        let source = try directory.write(randomBytes(10_000, seed: 4), to: "source.bin")
        let destination = directory.subpath("copy.bin")
        let wrong = try #require(Checksum(hex: String(repeating: "ab", count: 20)))
        #expect(throws: HashingError.self) { try FileHasher().copy(from: source, to: destination, expected: wrong) }
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test func copyRefusesToOverwrite() throws {
        let directory = try TemporaryDirectory()
        let source = try directory.write(Data("new".utf8), to: "source.bin")
        let destination = try directory.write(Data("old".utf8), to: "copy.bin")
        #expect(throws: HashingError.self) { try FileHasher().copy(from: source, to: destination) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)) == Data("old".utf8))
    }

    @Test func fingerprintThatMovedSinceTheScanIsReportedAsChanged() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write(Data("first".utf8), to: "file.bin")
        let hasher = try FileHasher()
        let seen = try hasher.hash(path: path).fingerprint
        try Data("second, longer".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            try hasher.hash(path: path, expected: seen)
        } throws: { error in
            guard case .changedWhileReading = error as? HashingError else { return false }
            return (error as? HashingError)?.isTransient == true
        }
    }

    @Test func missingFileNamesTheFileAndTheReason() throws {
        let directory = try TemporaryDirectory()
        let path = directory.subpath("missing.jpg")
        #expect {
            try FileHasher().hash(path: path)
        } throws: { error in
            let text = "\(error)"
            return text.contains("missing.jpg") && text.contains("No such file")
        }
    }

    @Test func symbolicLinksAreRefused() throws {
        let directory = try TemporaryDirectory()
        let target = try directory.write(Data("x".utf8), to: "target.bin")
        let link = directory.subpath("link.bin")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(throws: HashingError.self) { try FileHasher().hash(path: link) }
    }

    @Test func parallelResultsKeepRequestOrder() throws {
        let directory = try TemporaryDirectory()
        var requests: [HashRequest] = []
        for index in 0..<24 {
            let path = try directory.write(randomBytes(1000 * (index + 1), seed: UInt64(index)), to: "f\(index).bin")
            requests.append(HashRequest(path: path))
        }
        requests.insert(HashRequest(path: directory.subpath("absent.bin")), at: 5)
        let results = ParallelHasher.hash(requests, workers: 3)
        #expect(results.count == requests.count)
        for (request, result) in zip(requests, results) {
            if request.path.hasSuffix("absent.bin") {
                #expect((try? result.get()) == nil)
            } else {
                #expect(try result.get().checksum == (try referenceChecksum(request.path)))
            }
        }
    }

    @Test func digestOfKnownBytes() throws {
        #expect(try SHA1Digest.checksum(of: Array("abc".utf8)).hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(try SHA1Digest.checksum(of: []).hex == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
    }
}
