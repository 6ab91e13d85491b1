import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnImmich
import CairnImmichDestination
import CairnPipeline
import CairnStages
import Foundation

/// `--destination library|immich` and the Immich connection, shared by `import`, `sync`, `dry-run` and
/// `restore`. Each also comes from cairn.toml (`destination`, `immich_url`, `immich_api_key_file`) or the
/// environment (`CAIRN_DESTINATION`, `CAIRN_IMMICH_URL` or `IMMICH_URL`, `CAIRN_IMMICH_API_KEY_FILE`); the key
/// itself only from a file or `CAIRN_IMMICH_API_KEY` / `IMMICH_API_KEY`, never from a flag (flags show in `ps`).
struct DestinationOptions: ParsableArguments {
    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case library, immich
    }

    @Option(name: .customLong("destination"),
            help: "Where new content goes: library (the --library folder, default) or immich (an Immich server).")
    var kind: Kind?

    @Option(name: .customLong("immich-url"),
            help: "The Immich server, with or without /api, e.g. https://photos.example.com (also $IMMICH_URL).")
    var immichURL: String?

    enum AlbumSource: String, ExpressibleByArgument, CaseIterable {
        case folder, takeout
    }

    @Option(name: .customLong("album"), help: "Put the run's assets into this Immich album (found or created).")
    var album: String?

    @Option(name: .customLong("album-from"),
            help: "Put each asset into an Immich album named after its source folder (folder), or its Google Takeout album's title (takeout).")
    var albumFrom: AlbumSource?

    @Option(name: .customLong("time-zone"),
            help: "The IANA zone (Europe/Paris) of Takeout dates sent to Immich for photos without an offset of their own (default: time_zone in cairn.toml, else this machine's).")
    var timeZone: String?

    @Option(name: .customLong("immich-api-key-file"),
            help: "A file holding the Immich API key (else $CAIRN_IMMICH_API_KEY or $IMMICH_API_KEY); keep it chmod 600.")
    var apiKeyFile: String?

    /// What the flags, the environment and cairn.toml say together.
    struct Resolved {
        var kind: Kind
        var url: String?
        var keyFile: String?
        var timeZone: String?
    }

    func resolve(libraryRoot: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> Resolved {
        let settings = try CairnConfiguration.forCommand(
            libraryRoot: libraryRoot, environment: environment,
            flags: .init(destination: kind?.rawValue, immichURL: immichURL, immichAPIKeyFile: apiKeyFile, timeZone: timeZone))
        let kind = Kind(rawValue: settings.destination) ?? .library
        return Resolved(kind: kind, url: settings.immichURL ?? environment["IMMICH_URL"], keyFile: settings.immichAPIKeyFile,
                        timeZone: settings.timeZone)
    }

    static func environmentKey(_ environment: [String: String]) -> ImmichAPIKey? {
        (environment["CAIRN_IMMICH_API_KEY"] ?? environment["IMMICH_API_KEY"]).flatMap(ImmichAPIKey.init)
    }

    /// The key, from its file (with a warning on stderr when others may read it) or the environment.
    static func apiKey(file: String?, environment: [String: String]) throws -> ImmichAPIKey {
        if let file {
            do {
                let (key, warning) = try ImmichAPIKey.read(file: file)
                if let warning { Output.error("warning: \(warning)") }
                return key
            } catch { throw ValidationError(error.description) }
        }
        guard let key = environmentKey(environment) else {
            throw ValidationError("--destination immich needs an API key: --immich-api-key-file FILE, or "
                                  + "$CAIRN_IMMICH_API_KEY (make one in Immich: Account settings, API keys).")
        }
        return key
    }

    /// For commands that bring nothing in (`restore`, `trash purge`): albums are an import's.
    func rejectAlbums(in command: String) throws {
        if album != nil || albumFrom != nil {
            throw ValidationError("--album and --album-from apply to import and sync, not to \(command).")
        }
    }

    /// Whether the run goes to Immich (for defaults that differ, such as the upload lane's width).
    func isImmich(libraryRoot: String) throws -> Bool { try resolve(libraryRoot: libraryRoot).kind == .immich }

    /// Connects to the destination a run names (nil: the library itself). A server that cannot be reached or is
    /// too old stops the command with exit 1, a refused key, or one without a permission in `needs` (the albums'
    /// added when albums are asked for), with exit 77 (`needsAuth`), each in one line.
    func connect(libraryRoot: String, uploads: Int, cancellation: PipelineCancellation,
                 needs: Set<String>) async throws -> ImmichDestination? {
        let environment = ProcessInfo.processInfo.environment
        let resolved = try resolve(libraryRoot: libraryRoot, environment: environment)
        guard resolved.kind == .immich else {
            if immichURL != nil || apiKeyFile != nil || album != nil || albumFrom != nil || timeZone != nil {
                throw ValidationError("--immich-url, --immich-api-key-file, --album, --album-from and --time-zone need --destination immich.")
            }
            return nil
        }
        guard let text = resolved.url else {
            throw ValidationError("--destination immich needs the server: --immich-url URL (or immich_url in cairn.toml).")
        }
        let endpoint: ImmichEndpoint
        do { endpoint = try ImmichEndpoint(text) } catch { throw ValidationError("--immich-url \(text): \(error)") }
        let key = try Self.apiKey(file: resolved.keyFile, environment: environment)
        if album != nil, albumFrom != nil { throw ValidationError("--album and --album-from: one or the other.") }
        if let album, album.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--album needs a name.") }
        let albums: ImmichAlbums? = album.map(ImmichAlbums.named) ?? albumFrom.map { $0 == .folder ? .sourceFolder : .takeout }
        do {
            return try await ImmichDestination.connect(
                endpoint: endpoint, key: key, libraryRoot: libraryRoot, uploads: uploads, cancellation: cancellation,
                albums: albums, needs: needs.union(albums == nil ? [] : ImmichPermissions.albums),
                timeZone: resolved.timeZone.flatMap(UTCOffset.zone) ?? .local)
        } catch {
            throw Output.fail("\(endpoint): \(error)", error.kind == .needsAuth ? .needsAuth : .failure)
        }
    }
}
