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
        Peers.warm([file])
        Peers.warm([file])
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
        func cairn(syncs: Bool) throws -> Double {
            try Peers.best(of: repeats) {
                let path = destination()
                written.append(path)
                checksum = try hasher.copy(from: file, to: path, syncs: syncs).checksum.hex
            }
        }
        func cp(syncs: Bool) throws -> Double {
            try Peers.best(of: repeats) {
                let path = destination()
                written.append(path)
                _ = try Peers.run(["cp", file, path])
                if syncs { _ = try Peers.run(["sync", path]) }
            }
        }
        let cairnPlain = try cairn(syncs: false), cpPlain = try cp(syncs: false)
        let cairnSynced = try cairn(syncs: true), cpSynced = try cp(syncs: true)
        let reference = String(try Peers.run(["sha1sum", file]).prefix(40))
        guard checksum == reference else { throw ValidationError("cairn and sha1sum disagree on \(file)") }

        let gb = bytes / 1e9
        print(String(format: "%.2f GB, page-cached source, best of %d", gb, repeats))
        print("contender                                  seconds  GB/s    vs cp")
        for (name, seconds, peer) in [
            ("cairn hash-while-copy (SHA1 + copy)", cairnPlain, cpPlain), ("cp", cpPlain, cpPlain),
            ("cairn hash-while-copy, fsync", cairnSynced, cpSynced), ("cp, then sync FILE", cpSynced, cpSynced),
        ] {
            print(String(format: "%-42@ %7.2f  %5.2f  %5.2fx", name as NSString, seconds, gb / seconds, peer / seconds))
        }
    }
}
