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
}
