import CairnTesting
import Foundation
import Testing

@Suite struct ConfigCommandTests {
    @Test func flagBeatsEnvironmentBeatsTheLibrarysFile() throws {
        let folder = try TemporaryDirectory()
        try folder.write(Data("quarantine_days = 3\nstrictness = \"strict\"\napply_deletions = true\n".utf8), to: "lib/cairn.toml")
        let library = ["--library", folder.subpath("lib")]
        let file = try CairnBinary.run(["config"] + library)
        #expect(file.status == 0, "\(file.standardError)")
        #expect(file.standardOutput.contains("config file       \(folder.subpath("lib/cairn.toml"))"))
        #expect(file.standardOutput.contains("quarantine_days   3\n") && file.standardOutput.contains("strictness        strict"))
        let environment = try CairnBinary.run(["config"] + library, environment: ["CAIRN_QUARANTINE_DAYS": "5"])
        #expect(environment.standardOutput.contains("quarantine_days   5\n"))
        let flag = try CairnBinary.run(["config", "--quarantine-days", "7", "--no-apply-deletions"] + library,
                                       environment: ["CAIRN_QUARANTINE_DAYS": "5"])
        #expect(flag.standardOutput.contains("quarantine_days   7\n") && flag.standardOutput.contains("apply_deletions   false"))
    }

    @Test func aBadValueExitsWithTheUsageCodeNamingFileAndKey() throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write(Data("max_delete = -1\n".utf8), to: "my.toml")
        let result = try CairnBinary.run(["config", "--config", path, "--library", folder.subpath("lib")])
        #expect(result.status == 64)
        #expect(result.standardError.contains("\(path): max_delete: must not be negative, got -1"))
    }

    /// The memory budget: where it came from in `cairn config` and `cairn version --verbose`; a bad `--memory` is a
    /// usage error naming the option, before anything runs.
    @Test func theMemoryBudgetSaysWhereItCameFromAndABadOneIsAUsageError() throws {
        let folder = try TemporaryDirectory()
        try folder.write(Data("memory = \"768M\"\n".utf8), to: "lib/cairn.toml")
        let library = ["--library", folder.subpath("lib")]
        let file = try CairnBinary.run(["config"] + library)
        #expect(file.standardOutput.contains("memory            768 MiB (memory in cairn.toml)"), "\(file.standardOutput)")
        let environment = try CairnBinary.run(["config"] + library, environment: ["CAIRN_MEMORY": "2G"])
        #expect(environment.standardOutput.contains("memory            2 GiB (CAIRN_MEMORY)"), "\(environment.standardOutput)")
        let version = try CairnBinary.run(["version", "--verbose"], environment: ["CAIRN_MEMORY": "1.5G"])
        #expect(version.standardOutput.contains("1.5 GiB (CAIRN_MEMORY)"), "\(version.standardOutput)")
        let source = folder.subpath("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        for bad in ["100M", "lots"] {
            let result = try CairnBinary.run(["import", source, "--memory", bad] + library)
            #expect(result.status == 64, "--memory \(bad): \(result.standardError)")
            #expect(result.standardError.contains("--memory: "), "\(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.subpath("lib/catalog.sqlite")), "a refused run wrote nothing")
    }
}
