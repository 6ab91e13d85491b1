import Foundation

/// A fresh directory under the system temp folder, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String
    public var url: URL { URL(fileURLWithPath: path) }

    /// A new folder in `parent` (default: the temporary folder).
    public init(prefix: String = "cairn-test", in parent: String = NSTemporaryDirectory()) throws {
        let base = (parent.hasSuffix("/") ? parent : parent + "/") + "\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base
    }

    /// Writes `data` at `relativePath`, creating parent folders; returns the absolute path.
    @discardableResult
    public func write(_ data: Data, to relativePath: String) throws -> String {
        let full = path + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full))
        return full
    }

    public func subpath(_ relativePath: String) -> String { path + "/" + relativePath }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
