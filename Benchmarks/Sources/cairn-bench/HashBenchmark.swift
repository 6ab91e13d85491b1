import ArgumentParser
import CairnCore
import CairnHashing
import CairnNarration
import Foundation
import Glibc

/// `cairn-bench hash`: cairn's parallel SHA1 against `openssl speed` and `sha1sum` on the same page-cached files.
struct HashBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Hash a page-cached corpus with cairn, sha1sum (one process, and one per core) and compare with openssl speed."
    )

    @Option(help: "The corpus folder (every file below it is hashed).")
    var corpus: String

    @Option(help: "Cores to use for cairn, for `openssl speed -multi` and for the parallel sha1sum.")
    var cores = System.coreCount

    @Option(help: "Timed repetitions per contender; the best is kept.")
    var repeats = 3

    @Option(name: .customLong("buffer-kib"), help: "cairn's read size in KiB.")
    var bufferKiB = FileHasher.defaultBufferSize / 1024

    func run() throws {
        let files = Peers.files(in: corpus)
        guard !files.isEmpty else { throw ValidationError("\(corpus) holds no files") }
        let bytes = Double(Peers.totalBytes(files))
        Peers.warm(files)
        Peers.warm(files)

        // openssl speed: the raw SHA1 rate of this CPU on 16 KiB blocks, one core and `cores` cores; the best of
        // two readings each, as cairn's time is the best of its repeats (a neighbour's burst on a shared VM
        // would otherwise make the reference look slow).
        let single = try max(opensslRate(multi: 1), opensslRate(multi: 1))
        let multi = cores > 1 ? try max(opensslRate(multi: cores), opensslRate(multi: cores)) : single

        let requests = files.map { HashRequest(path: $0) }
        var checksum: Checksum?
        let cairnTime = Peers.best(of: repeats) {
            let results = ParallelHasher.hash(requests, workers: cores, bufferSize: bufferKiB * 1024)
            checksum = try? results[0].get().checksum
        }
        // Narration cost: the same hashing with a live narrator (plain renderer to /dev/null, run log, memory).
        let devNull = open("/dev/null", O_WRONLY)
        defer { close(devNull) }
        let logDirectory = NSTemporaryDirectory() + "cairn-bench-runs-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: logDirectory) }
        var narratedTimes: [Double] = [], silentTimes: [Double] = []
        for _ in 0..<max(1, repeats) {
            silentTimes.append(Peers.time { _ = ParallelHasher.hash(requests, workers: cores, bufferSize: bufferKiB * 1024) })
            let log = try RunLogStore(directory: logDirectory).makeWriter(runID: RunID.make())
            let narrator = Narrator(handler: MultiplexNarrationHandler([
                PlainRenderer(sink: FileDescriptorSink(descriptor: devNull)), log, InMemoryNarrationHandler(keepsEvents: false),
            ]))
            narrator.phaseStarted(.hashing)
            narrator.sourceScanned(filesSeen: files.count, bytesSeen: Int64(bytes), toHash: files.count, bytesToHash: Int64(bytes))
            narratedTimes.append(Peers.time {
                _ = ParallelHasher.hash(requests, workers: cores, bufferSize: bufferKiB * 1024) { index, size in
                    narrator.hashed(file: files[index], bytes: size)
                }
            })
            narrator.runEnded(.success)
            try log.close()
        }
        // The same hashing with `read` for every file, as before mappings: what the mapping saves.
        let readOnlyTime = Peers.best(of: repeats) {
            _ = ParallelHasher.hash(requests, workers: cores, bufferSize: bufferKiB * 1024, mappingThreshold: nil)
        }
        let sha1sumTime = try Peers.best(of: max(1, repeats - 1)) { try Peers.run(["sha1sum"] + files) }
        let parallelSha1sumTime = try Peers.best(of: max(1, repeats - 1)) {
            try Peers.run(["xargs", "-0", "-P", "\(cores)", "-n", "\(max(1, files.count / (cores * 4)))", "sha1sum"],
                          input: files.joined(separator: "\0"))
        }
        let reference = String(try Peers.run(["sha1sum", files[0]]).prefix(40))
        guard checksum?.hex == reference else { throw ValidationError("cairn and sha1sum disagree on \(files[0])") }

        let gb = bytes / 1e9
        var table = Table(header: ["contender", "seconds", "GB/s", "cairn is"])
        table.rows.append(["cairn (\(cores) threads, mapped from \(FileHasher.defaultMappingThreshold / 1024) KiB)", format(cairnTime, 3), format(gb / cairnTime), "1.00x"])
        table.rows.append(["cairn, read() for every file", format(readOnlyTime, 3), format(gb / readOnlyTime),
                           format(readOnlyTime / cairnTime) + "x slower"])
        table.rows.append(["sha1sum (one process)", format(sha1sumTime, 3), format(gb / sha1sumTime), format(sha1sumTime / cairnTime) + "x faster"])
        table.rows.append(["sha1sum (\(cores) processes, xargs -P)", format(parallelSha1sumTime, 3), format(gb / parallelSha1sumTime),
                           format(parallelSha1sumTime / cairnTime) + "x faster"])
        table.rows.append(["openssl speed -evp sha1, 16 KiB, 1 core", "-", format(single / 1e9), ""])
        table.rows.append(["openssl speed -evp sha1, 16 KiB, x \(cores) cores", "-", format(single * Double(cores) / 1e9),
                           format(100 * (gb / cairnTime) / (single * Double(cores) / 1e9), 1) + " % of it"])
        table.rows.append(["openssl speed -multi \(cores)", "-", format(multi / 1e9),
                           format(100 * (gb / cairnTime) / (multi / 1e9), 1) + " % of it"])
        let silent = silentTimes.min()!, narrated = narratedTimes.min()!
        table.rows.append(["cairn with narration on (best of \(narratedTimes.count))", format(narrated, 3), format(gb / narrated),
                           format(100 * (narrated - silent) / silent, 1) + " % slower than off (" + format(silent, 3) + " s)"])
        print("hashing \(files.count) page-cached files, \(format(gb, 2)) GB, \(cores) cores")
        print(table.render())
    }

    /// Bytes per second from `openssl speed -evp sha1 -bytes 16384`.
    private func opensslRate(multi: Int) throws -> Double {
        var arguments = ["openssl", "speed", "-evp", "sha1", "-bytes", "16384", "-seconds", "3"]
        if multi > 1 { arguments += ["-multi", "\(multi)"] }
        let output = try Peers.run(arguments)
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("sha1") }),
              let field = line.split(separator: " ").last, field.hasSuffix("k"),
              let thousands = Double(field.dropLast())
        else { throw ValidationError("cannot read openssl speed output:\n\(output)") }
        return thousands * 1000
    }
}
