import Foundation

/// Where a shared work queue lives, read from a `postgres://` URL (`--queue`, `CAIRN_QUEUE`):
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE`, or a Unix socket's folder as `host` in the query
/// (`postgres:///cairn?host=/run/postgresql&user=cairn`), as libpq reads them. The password never appears in
/// `description`, an error or a log.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public enum Endpoint: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// The folder holding the server's socket (`.s.PGSQL.PORT`).
        case socket(folder: String, port: Int)
    }

    public var endpoint: Endpoint
    public var username: String
    public var password: String?
    public var database: String

    public init(endpoint: Endpoint, username: String = "postgres", password: String? = nil, database: String = "postgres") {
        self.endpoint = endpoint
        self.username = username
        self.password = password
        self.database = database
    }

    public init(url text: String) throws(PostgresLocationError) {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql"
        else { throw PostgresLocationError(reason: "not a postgres:// or postgresql:// URL") }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { _, last in last })
        let port = components.port ?? query["port"].flatMap { Int($0) } ?? 5432
        guard (1...65535).contains(port) else { throw PostgresLocationError(reason: "port \(port) is out of range") }
        let host = query["host"] ?? components.host.flatMap { $0.isEmpty ? nil : $0 }
        switch host {
        case .some(let host) where host.hasPrefix("/"): endpoint = .socket(folder: host, port: port)
        case .some(let host): endpoint = .tcp(host: host, port: port)
        case .none: endpoint = .socket(folder: "/var/run/postgresql", port: port)
        }
        username = components.user.flatMap { $0.isEmpty ? nil : $0 } ?? query["user"] ?? "postgres"
        password = components.password ?? query["password"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? (query["dbname"] ?? username) : path
    }

    /// The URL with its password left out.
    public var description: String {
        let credentials = username + (password == nil ? "" : ":•••")
        switch endpoint {
        case .tcp(let host, let port): return "postgres://\(credentials)@\(host):\(port)/\(database)"
        case .socket(let folder, let port): return "postgres://\(credentials)@/\(database)?host=\(folder)&port=\(port)"
        }
    }

    /// The folder's socket file for `port`, as libpq names it.
    package func socketPath(_ folder: String, _ port: Int) -> String { folder + "/.s.PGSQL.\(port)" }
}

public struct PostgresLocationError: Error, CustomStringConvertible, Equatable {
    public var reason: String
    public var description: String { "the PostgreSQL URL is not usable: \(reason)" }
}
