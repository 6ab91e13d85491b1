import ArgumentParser
import CairnHashing
import Foundation
import Glibc

/// `cairn-bench copy`: cairn's hash-while-copy of one big file against `cp` of the same file, same run.
struct CopyBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy one big page-cached file with cairn's hash-while-copy and with cp, without and with fsync."
    )

    @Option(help: "The file to copy (a multi-GB video, for example); it is read into the page cache first.")
    var file: String

    @Option(help: "The folder the copies go to (on the disk a library would use); created if missing.")
    var to: String

    @Option(help: "Timed repetitions per contender; the best is kept.")
    var repeats = 3

    func validate() throws {
        guard FileManager.default.isReadableFile(atPath: file) else { throw ValidationError("\(file) cannot be read") }
        guard repeats >= 1 else { throw ValidationError("--repeats must be at least 1") }
    }

    func run() throws {
        try FileManager.default.createDirectory(atPath: to, withIntermediateDirectories: true)
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value ?? 0)
        var counter = 0
        func destination() -> String {
            counter += 1
            return to + "/copy-\(getpid())-\(counter)"
        }
        let hasher = try FileHasher()
        var checksum = ""
        // Each contender writes a fresh file; the copies are removed only at the end (a removal between runs
        // makes the next allocation slower on ext4).
        var written: [String] = []
        defer { for path in written { unlink(path) } }
        // Rounds interleave the contenders, so a slow spell of the disk does not land on one alone. Before every
        // timed run: earlier copies written out (`sync`), and the source back in the page cache (cairn's copy drops
        // it afterwards, as an import does), read in blocks rather than into memory whole.
        let contenders: [(name: String, run: (String) throws -> Void)] = [
            ("cairn hash-while-copy (SHA1 + copy)", { path in
                checksum = try hasher.copy(from: file, to: path, syncs: false).checksum.hex }),
            ("cp", { path in _ = try Peers.run(["cp", file, path]) }),
            ("cairn hash-while-copy, fsync", { path in
                checksum = try hasher.copy(from: file, to: path, syncs: true).checksum.hex }),
            ("cp, then sync FILE", { path in
                _ = try Peers.run(["cp", file, path])
                _ = try Peers.run(["sync", path]) }),
            // The hash alone (SHA-NI, as cairn's): the floor a hash-while-copy on one core cannot go under.
            ("openssl sha1 (the hash alone, no copy)", { _ in _ = try Peers.run(["openssl", "sha1", file]) }),
        ]
        var best = [Double](repeating: .infinity, count: contenders.count)
        for _ in 0..<repeats {
            for (index, contender) in contenders.enumerated() {
                _ = try Peers.run(["sh", "-c", "sync; cat \"$0\" > /dev/null", file])
                let path = destination()
                written.append(path)
                best[index] = min(best[index], try Peers.time { try contender.run(path) })
            }
        }
        let reference = String(try Peers.run(["sha1sum", file]).prefix(40))
        guard checksum == reference else { throw ValidationError("cairn and sha1sum disagree on \(file)") }

        let gb = bytes / 1e9
        print(String(format: "%.2f GB, page-cached source, best of %d", gb, repeats))
        print("contender                                  seconds  GB/s    vs cp")
        // Each against cp the same way: without a sync, with one; the hash alone against the plain cp.
        let peers = [1, 1, 3, 3, 1]
        for (index, contender) in contenders.enumerated() {
            let seconds = best[index], peer = best[peers[index]]
            print(contender.name.padding(toLength: 42, withPad: " ", startingAt: 0)
                  + String(format: " %7.2f  %5.2f  %5.2fx", seconds, gb / seconds, peer / seconds))
        }
    }
}
