import CairnCore
import Foundation
import PostgresNIO

/// postgres-nio's configurations for a `PostgresLocation` (the value itself is Core's: the command line reads it in
/// every build).
extension PostgresLocation {
    /// For a single connection of its own (the library's lock), where `clientConfiguration` is for a pool.
    func connectionConfiguration() -> PostgresConnection.Configuration {
        var configuration = switch endpoint {
        case .tcp(let host, let port):
            PostgresConnection.Configuration(host: host, port: port, username: username, password: password,
                                             database: database, tls: .disable)
        case .socket(let folder, let port):
            PostgresConnection.Configuration(unixSocketPath: socketPath(folder, port), username: username,
                                             password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    package func clientConfiguration() -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            configuration = .init(host: host, port: port, username: username, password: password, database: database, tls: .disable)
        case .socket(let folder, let port):
            configuration = .init(unixSocketPath: socketPath(folder, port), username: username, password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}
