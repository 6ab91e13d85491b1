import ArgumentParser
import CairnConfiguration
import CairnCore
import Foundation

/// A command-level failure with the sentence a person reads.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Parses SHA1 arguments (40 hex digits, any case) for `validate()`.
enum ChecksumArguments {
    static func parse(_ values: [String], option: String) throws -> [Checksum] {
        try values.map { value in
            guard let checksum = Checksum(hex: value.lowercased()) else {
                throw ValidationError("\(option) \(value): not a SHA1 (40 hex digits; see `cairn pending list`)")
            }
            return checksum
        }
    }
}

extension CairnConfiguration {
    /// The settings as a command reads them (`resolve`); a bad file, key or variable is a usage error naming it.
    static func forCommand(libraryRoot: String, configFile: String? = nil,
                           environment: [String: String] = ProcessInfo.processInfo.environment,
                           flags: Overrides = Overrides()) throws -> CairnConfiguration {
        do { return try resolve(configFile: configFile, libraryRoot: libraryRoot, environment: environment, flags: flags) }
        catch { throw ValidationError(error.description) }
    }
}
