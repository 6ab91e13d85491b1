import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnLibrary
import CairnRun
import Foundation

/// A PostgreSQL database a run is told of (`--queue`, `--catalog`): by its flag, else by its `CAIRN_*` variable,
/// else by its key in a sync's `--config` or the library's cairn.toml. A password is best kept in the variable or
/// in `$PGPASSWORD`: a flag shows in `ps`.
enum PostgresSetting {
    /// The location named for `key` (`flag` given as `flagName`), with `$PGPASSWORD` when its URL has no password;
    /// nil when nothing names one.
    static func location(flag: String?, flagName: String, key: CairnConfiguration.Key, libraryRoot: String?,
                         configFile: String?, environment: [String: String],
                         configured: (CairnConfiguration) -> String?) throws -> PostgresLocation? {
        let text: String, origin: String
        if let flag {
            (text, origin) = (flag, flagName)
        } else if let named = environment[key.environmentVariable], !named.isEmpty {
            (text, origin) = (named, "environment variable \(key.environmentVariable)")
        } else if let libraryRoot {
            let settings = try CairnConfiguration.forCommand(libraryRoot: libraryRoot, configFile: configFile,
                                                             environment: environment)
            guard let named = configured(settings) else { return nil }
            (text, origin) = (named, "\(settings.file ?? CairnConfiguration.fileName): \(key.rawValue)")
        } else {
            return nil
        }
        guard RunAssembly.hasPostgres else {
            throw ValidationError("\(origin): this cairn was built without PostgreSQL; scripts/import --with-postgres "
                                  + "(or swift build with the default traits) builds one that reaches it")
        }
        var location: PostgresLocation
        do { location = try PostgresLocation(url: text) } catch { throw ValidationError("\(origin): \(error)") }
        if location.password == nil, let password = environment["PGPASSWORD"], !password.isEmpty {
            location.password = password
        }
        return location
    }

    /// Says once, at the start of a run, that a password in the flag's URL is seen by anyone who lists processes.
    static func warnOfExposedPassword(flag: String?, flagName: String, key: CairnConfiguration.Key) {
        if let flag, (try? PostgresLocation(url: flag))?.password != nil {
            Output.error("warning: the \(flagName) URL's password shows in `ps`; put it in $PGPASSWORD or the URL in "
                         + "$\(key.environmentVariable)")
        }
    }
}

/// `--catalog URL`: the PostgreSQL database that holds the library's catalog instead of its SQLite file, for a
/// library several hosts work on (its folder shared over NFS, where SQLite must not live). Also `$CAIRN_CATALOG`,
/// or `catalog` in the library's cairn.toml.
struct CatalogLocationOption: ParsableArguments {
    @Option(name: .customLong("catalog"),
            help: ArgumentHelp("The PostgreSQL database that keeps the library's catalog instead of its SQLite file (a new library's first import puts it there; with --destination immich, cairn's state for that server and user, in a database of its own), e.g. postgres://cairn@db.lan/photos (also $CAIRN_CATALOG, or `catalog` in the library's cairn.toml; a password in $PGPASSWORD).", visibility: RunAssembly.postgresOptionVisibility))
    var url: String?

    /// The catalog named by the flag, `$CAIRN_CATALOG` or cairn.toml; else the one the folder records
    /// (`.cairn-catalog`, written by its first `import --catalog`), so a library that keeps its catalog in
    /// PostgreSQL is never imported into a new SQLite catalog by a run that forgot the flag. `stateRoot`: the folder
    /// whose catalog is meant when it is not the library's own (an Immich destination's state, under the library
    /// whose cairn.toml is read).
    func location(libraryRoot: String, stateRoot: String? = nil,
                  environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresLocation? {
        if let named = try PostgresSetting.location(flag: url, flagName: "--catalog", key: .catalog, libraryRoot: libraryRoot,
                                                    configFile: nil, environment: environment, configured: { $0.catalog }) {
            return named
        }
        return try Self.recorded(in: stateRoot ?? libraryRoot, environment: environment)
    }

    /// The catalog a folder records (`.cairn-catalog`), with `$PGPASSWORD`; nil for a folder whose catalog is its
    /// SQLite file.
    static func recorded(in root: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws
        -> PostgresLocation? {
        let layout = LibraryLayout(root: root)
        guard let recorded = layout.postgresCatalogNamed else { return nil }
        var location: PostgresLocation
        do { location = try PostgresLocation(url: recorded) } catch {
            throw ValidationError("\(layout.catalogMarkerPath): \(error)")
        }
        if let password = environment["PGPASSWORD"], !password.isEmpty { location.password = password }
        return location
    }

    func warnOfExposedPassword() { PostgresSetting.warnOfExposedPassword(flag: url, flagName: "--catalog", key: .catalog) }
}
