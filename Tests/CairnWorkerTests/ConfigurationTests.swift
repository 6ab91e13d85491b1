import CairnCore
import CairnReconcile
import CairnTesting
import Foundation
import Testing

@testable import CairnConfiguration

@Suite struct ConfigurationTests {
    let library: TemporaryDirectory

    init() throws { library = try TemporaryDirectory() }

    func writeConfig(_ text: String, to name: String = "cairn.toml") throws -> String {
        try library.write(Data(text.utf8), to: name)
    }

    @Test func defaultsWithoutAnyFile() throws {
        let limits = MemoryLimits(physicalMemory: 4 << 30)
        let configuration = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:],
                                                           memoryLimits: limits)
        var expected = CairnConfiguration()
        expected.memory = .detected(limits)
        #expect(configuration == expected)
        #expect(configuration.memory == MemoryBudget(bytes: 2 << 30, origin: .physicalMemory))
        #expect(configuration.reconcile.quarantineDays == 14 && configuration.reconcile.strictness == .trusting)
        #expect(configuration.file == nil && !configuration.applyDeletions && configuration.clips)
    }

    @Test func readsEveryKeyFromTheLibrarysFile() throws {
        let path = try writeConfig("""
            # cron: nightly sync of the camera card
            source = "/media/card/DCIM"
            quarantine_days = 3
            strictness = "strict"
            max_delete = 25
            vanish_threshold = 0.25
            apply_deletions = true
            lanes = "transfer=2,thumbnail=1"
            clips = false
            """)
        let configuration = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        #expect(configuration.file == path)
        #expect(configuration.source == "/media/card/DCIM")
        #expect(configuration.reconcile == (try ReconcileSettings(quarantineDays: 3, strictness: .strict, maxDelete: 25,
                                                                  vanishThreshold: 0.25)))
        #expect(configuration.applyDeletions && !configuration.clips)
        #expect(configuration.lanes == "transfer=2,thumbnail=1")
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() throws {
        let path = try writeConfig("quarantine_days = 3\nstrictness = \"strict\"\nmax_delete = 9\n", to: "elsewhere.toml")
        let environment = ["CAIRN_QUARANTINE_DAYS": "5", "CAIRN_STRICTNESS": "trusting", "CAIRN_APPLY_DELETIONS": "yes"]
        let resolved = try CairnConfiguration.resolve(
            configFile: path, libraryRoot: library.path, environment: environment,
            flags: .init(quarantineDays: 7, applyDeletions: false))
        #expect(resolved.reconcile.quarantineDays == 7)  // flag
        #expect(resolved.reconcile.strictness == .trusting)  // environment
        #expect(resolved.reconcile.maxDelete == 9)  // file
        #expect(resolved.reconcile.vanishThreshold == 0.5)  // default
        #expect(!resolved.applyDeletions)  // a flag can turn the environment's "yes" off
    }

    @Test func errorsNameTheFileTheKeyAndTheReason() throws {
        let path = try writeConfig("quarantine_days = 120\n")
        #expect(throws: ConfigurationError(origin: path, key: "quarantine_days", reason: "must be within 0...90 days, got 120")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        }
        _ = try writeConfig("quarantine = 3\n")
        let unknown = #expect(throws: ConfigurationError.self) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        }
        #expect(unknown?.description.hasPrefix("\(path): quarantine: unknown key") == true)
        _ = try writeConfig("strictness = 3\n")
        #expect(throws: ConfigurationError(origin: path, key: "strictness", reason: "must be a string")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        }
        _ = try writeConfig("lanes = \"transfer=0\"\n")
        let lanes = #expect(throws: ConfigurationError.self) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        }
        #expect(lanes?.key == "lanes" && lanes?.reason.contains("transfer=0") == true)
        _ = try writeConfig("quarantine_days = [\n")
        let syntax = #expect(throws: ConfigurationError.self) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        }
        #expect(syntax?.origin == path && syntax?.reason.hasPrefix("not valid TOML at line") == true)
    }

    @Test func environmentAndFlagErrorsNameTheVariableOrFlag() throws {
        #expect(throws: ConfigurationError(origin: "environment variable CAIRN_APPLY_DELETIONS", key: nil,
                                           reason: "must be true or false (or 1/0, yes/no, on/off), got 'maybe'")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path,
                                           environment: ["CAIRN_APPLY_DELETIONS": "maybe"])
        }
        #expect(throws: ConfigurationError(origin: "flag --vanish-threshold", key: nil,
                                           reason: "must be a fraction within 0...1 (0.5 is 50 %), got 50.0")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:],
                                           flags: .init(vanishThreshold: 50))
        }
    }

    /// `memory`: the file's, then CAIRN_MEMORY's, each said to be where the figure came from; a bad one named.
    @Test func memoryFromTheFileOrTheEnvironmentAndItsErrors() throws {
        let limits = MemoryLimits(cgroup: .init(bytes: 1 << 30, file: "/sys/fs/cgroup/memory.max"), physicalMemory: 8 << 30)
        _ = try writeConfig("memory = \"768M\"\n")
        let file = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:],
                                                  memoryLimits: limits)
        #expect(file.memory == MemoryBudget(bytes: 768 << 20, hardLimit: 896 << 20, origin: .configurationFile))
        let environment = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path,
                                                         environment: ["CAIRN_MEMORY": "1.5G"], memoryLimits: limits)
        #expect(environment.memory?.bytes == 3 << 29 && environment.memory?.origin == .environment)
        #expect(try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:],
                                               memoryLimits: limits).pipelineConfiguration(cores: 2).memory == file.memory)
        #expect(throws: ConfigurationError(origin: "environment variable CAIRN_MEMORY", key: nil,
                                           reason: "100M is below the least a run needs, 128M")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path,
                                           environment: ["CAIRN_MEMORY": "100M"], memoryLimits: limits)
        }
        let path = try writeConfig("memory = 512\n")
        #expect(throws: ConfigurationError(origin: path, key: "memory", reason: "must be a string")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:], memoryLimits: limits)
        }
    }

    /// The destination's checks and the zone of dates sent without an offset: file, environment, flag, each checked.
    @Test func destinationCheckAndTimeZoneKeys() throws {
        _ = try writeConfig("check_destination_days = 30\ndestination_drift = \"restore\"\ntime_zone = \"Asia/Tokyo\"\n")
        let file = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:])
        #expect(file.destinationCheck == DestinationCheckPolicy(everyDays: 30, mending: .restore))
        #expect(file.timeZone == "Asia/Tokyo")
        let flagged = try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path,
                                                     environment: ["CAIRN_CHECK_DESTINATION_DAYS": "2"],
                                                     flags: .init(destinationDrift: .report, timeZone: "UTC"))
        #expect(flagged.destinationCheck == DestinationCheckPolicy(everyDays: 2, mending: .report) && flagged.timeZone == "UTC")
        #expect(try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path + "/none", environment: [:])
            .destinationCheck == DestinationCheckPolicy(everyDays: 7, mending: .report))
        #expect(throws: ConfigurationError(origin: "environment variable CAIRN_CHECK_DESTINATION_DAYS", key: nil,
                                           reason: "must be within 1...365 days, got 0")) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path,
                                           environment: ["CAIRN_CHECK_DESTINATION_DAYS": "0"])
        }
        let zone = #expect(throws: ConfigurationError.self) {
            try CairnConfiguration.resolve(configFile: nil, libraryRoot: library.path, environment: [:],
                                           flags: .init(timeZone: "Mars/Olympus"))
        }
        #expect(zone?.origin == "flag --time-zone" && zone?.reason.contains("Mars/Olympus") == true)
    }

    @Test func anExplicitConfigFileMustExist() throws {
        let missing = library.subpath("nope.toml")
        #expect(throws: ConfigurationError(origin: missing, key: nil, reason: "no such file")) {
            try CairnConfiguration.resolve(configFile: missing, libraryRoot: library.path, environment: [:])
        }
    }
}
