import ArgumentParser
import CairnCore
import CairnHashing
import Foundation

/// `cairn hash FILE...`: SHA1 of each file, printed exactly as `sha1sum` prints it.
struct HashCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash",
        abstract: "Print the SHA1 of files, in sha1sum's format (cairn's identity for content).",
        discussion: "Files are hashed in parallel with OpenSSL; output keeps the order given. Exits 1 if any file failed."
    )

    @Argument(help: "The files to hash.")
    var files: [String]

    @Option(name: .customLong("threads"), help: "How many files to hash at once (default: one per core).")
    var threads: Int = System.coreCount

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one file to hash.") }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1.") }
    }

    func run() throws {
        // Like sha1sum, follow a link the user named; the import scanner never does.
        let requests = files.map { HashRequest(path: URL(fileURLWithPath: $0).resolvingSymlinksInPath().path) }
        let results = ParallelHasher.hash(requests, workers: threads)
        var anyFailed = false
        var output = ""
        for (name, result) in zip(files, results) {
            switch result {
            case .success(let hashed): output += Self.sha1sumLine(hex: hashed.checksum.hex, name: name)
            case .failure(let error):
                anyFailed = true
                FileHandle.standardOutput.write(Data(output.utf8))
                output = ""
                Output.error("\(name): \(Self.reasonOnly(error))")
            }
        }
        FileHandle.standardOutput.write(Data(output.utf8))
        if anyFailed { throw ExitCode(1) }
    }

    /// sha1sum's line: a name holding a backslash or newline is escaped and the line starts with `\`.
    static func sha1sumLine(hex: String, name: String) -> String {
        guard name.contains("\\") || name.contains("\n") || name.contains("\r") else { return "\(hex)  \(name)\n" }
        let escaped = name.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        return "\\\(hex)  \(escaped)\n"
    }

    private static func reasonOnly(_ error: HashingError) -> String {
        if case .system(let system) = error { return system.reason }
        return error.description
    }
}
