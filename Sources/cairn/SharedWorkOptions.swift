import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnRun
import Foundation

/// `--queue URL`: the PostgreSQL database a library's derivative work is shared through. Also `$CAIRN_QUEUE`; a
/// password is best kept there or in `$PGPASSWORD` (a flag shows in `ps`).
struct QueueLocationOption: ParsableArguments {
    @Option(name: .customLong("queue"),
            help: ArgumentHelp("The PostgreSQL database thumbnails and clips are shared through, e.g. postgres://cairn@db.lan/cairn or postgres:///cairn?host=/run/postgresql (also $CAIRN_QUEUE, or `queue` in the library's cairn.toml).", visibility: RunAssembly.postgresOptionVisibility))
    var url: String?

    /// The queue named by the flag, else by `$CAIRN_QUEUE`, else by the `queue` key of `configFile` (a sync's
    /// `--config`) or of `libraryRoot`'s cairn.toml; nil when none names one.
    func location(libraryRoot: String? = nil, configFile: String? = nil,
                  environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresLocation? {
        try PostgresSetting.location(flag: url, flagName: "--queue", key: .queue, libraryRoot: libraryRoot,
                                     configFile: configFile, environment: environment) { $0.queue }
    }

    /// A password in the flag's URL is seen by anyone who lists processes: said once, at the start of a run.
    func warnOfExposedPassword() { PostgresSetting.warnOfExposedPassword(flag: url, flagName: "--queue", key: .queue) }

    func required(libraryRoot: String? = nil, configFile: String? = nil) throws -> PostgresLocation {
        guard let location = try location(libraryRoot: libraryRoot, configFile: configFile) else {
            throw ValidationError("Name the queue: --queue postgres://USER@HOST/DATABASE (or $CAIRN_QUEUE, or `queue` in the library's cairn.toml).")
        }
        return location
    }
}

/// `--queue` and `--work-lanes` of a run that imports (`import`, `sync`, `watch`): its thumbnails and clips shared
/// through the queue with `cairn worker` processes, the library's lock held there.
struct SharedWorkOptions: ParsableArguments {
    @OptionGroup var queue: QueueLocationOption

    @Option(name: .customLong("work-lanes"),
            help: ArgumentHelp("With --queue: queued jobs this run does itself (default: one per core; 0 leaves them all to workers).", visibility: RunAssembly.postgresOptionVisibility))
    var workLanes: Int?

    @Flag(name: .customLong("no-wait"),
          help: ArgumentHelp("With --queue: end once every new file is in the library and its thumbnail and clip jobs are queued, leaving them to workers; the next run records what they made.", visibility: RunAssembly.postgresOptionVisibility))
    var noWait = false

    /// For `validate()`: `immich`, the run's destination is an Immich server (which makes its own thumbnails);
    /// `configFile`, a sync's `--config`.
    func check(immich: Bool, libraryRoot: String, configFile: String? = nil) throws {
        if let workLanes, workLanes < 0 { throw ValidationError("--work-lanes cannot be negative.") }
        let sharing = try queue.location(libraryRoot: libraryRoot, configFile: configFile) != nil
        if workLanes != nil || noWait, !sharing {
            throw ValidationError("\(noWait ? "--no-wait" : "--work-lanes") needs --queue (or $CAIRN_QUEUE, or `queue` in the library's cairn.toml).")
        }
        if noWait, let workLanes, workLanes > 0 {
            throw ValidationError("--no-wait leaves the jobs to workers and runs none here: drop --work-lanes.")
        }
        if sharing, immich {
            throw ValidationError("--queue shares the library's thumbnails and clips, and Immich makes its own: use one of --queue and --destination immich.")
        }
    }

    /// Whether --queue, $CAIRN_QUEUE or the configuration (`configFile`, else the library's cairn.toml) names a queue.
    func isSharing(libraryRoot: String, configFile: String? = nil) -> Bool {
        (try? queue.location(libraryRoot: libraryRoot, configFile: configFile)) != nil
    }

    /// The queue this run takes part in, as `RunAssembly` opens it; nil when nothing names one.
    func request(libraryRoot: String, configFile: String? = nil) throws -> SharedWorkRequest? {
        guard let location = try queue.location(libraryRoot: libraryRoot, configFile: configFile) else { return nil }
        queue.warnOfExposedPassword()
        return SharedWorkRequest(queue: location, lanes: noWait ? 0 : workLanes ?? System.coreCount, waits: !noWait)
    }
}

extension RunAssembly {
    /// `--catalog`, `--queue` and their companions are listed in `--help` only by a build that reaches PostgreSQL;
    /// another build still parses them, to refuse them with the reason.
    static var postgresOptionVisibility: ArgumentVisibility { hasPostgres ? .default : .hidden }
}
