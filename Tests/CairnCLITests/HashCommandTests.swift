import CairnTesting
import Foundation
import Testing

@Suite struct HashCommandTests {
    @Test func outputIsByteIdenticalToSha1sum() throws {
        let directory = try TemporaryDirectory()
        var big = Data(count: 50 * 1024 * 1024)
        big.withUnsafeMutableBytes { raw in
            for index in stride(from: 0, to: raw.count, by: 4096) { raw[index] = UInt8(truncatingIfNeeded: index / 4096) }
        }
        let names = ["empty", "one byte", "65537.bin", "fifty MB.mov", "café ünïcode 写真.jpg"]
        try directory.write(Data(), to: names[0])
        try directory.write(Data([0x42]), to: names[1])
        try directory.write(Data((0..<65_537).map { UInt8(truncatingIfNeeded: $0 &* 7) }), to: names[2])
        try directory.write(big, to: names[3])
        try directory.write(Data("non-ascii".utf8), to: names[4])

        let ours = try CairnBinary.run(["hash"] + names, in: directory.path)
        let reference = try ExternalTool.run(["sha1sum"] + names, in: directory.path)
        #expect(ours.status == 0)
        #expect(Data(ours.standardOutput.utf8) == reference)
    }

    @Test func backslashNamesAreEscapedLikeSha1sum() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("x".utf8), to: "back\\slash.jpg")
        let ours = try CairnBinary.run(["hash", "back\\slash.jpg"], in: directory.path)
        let reference = try ExternalTool.run(["sha1sum", "back\\slash.jpg"], in: directory.path)
        #expect(Data(ours.standardOutput.utf8) == reference)
    }

    @Test func missingFileNamesItOnStderrAndExitsOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("x".utf8), to: "here.jpg")
        let result = try CairnBinary.run(["hash", "here.jpg", "absent.jpg"], in: directory.path)
        #expect(result.status == 1)
        #expect(result.standardOutput.hasSuffix("  here.jpg\n"))
        #expect(result.standardError.contains("absent.jpg"))
        #expect(result.standardError.contains("No such file or directory"))
    }
}
