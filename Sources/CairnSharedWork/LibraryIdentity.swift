import CairnLibrary
import Foundation

/// A library's name in a shared work queue: a UUID kept in the library folder, so every host finds the same
/// library wherever it mounts it, and a worker whose mount is missing (an empty folder in its place) finds none
/// and refuses to work instead of writing into the wrong disk.
public enum LibraryIdentity {
    /// The identity of the library at `layout`, made and made durable when it has none yet (an import, holding
    /// the library's lock).
    public static func ensure(_ layout: LibraryLayout) throws -> String {
        if let identity = read(layout) { return identity }
        let identity = UUID().uuidString.lowercased()
        let temporary = layout.identityPath + ".new"
        do {
            try Data((identity + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
            try FileSystem.syncFile(temporary)
            try FileSystem.renameDurably(temporary, to: layout.identityPath)
        } catch {
            throw SharedWorkError("cannot record the library's identity in \(layout.identityPath): \(error)")
        }
        return identity
    }

    /// The identity of the library at `layout`, nil when it has none (no import has used a queue there, or the
    /// folder is not the library: an unmounted disk).
    public static func read(_ layout: LibraryLayout) -> String? {
        guard let data = FileManager.default.contents(atPath: layout.identityPath) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return UUID(uuidString: text) == nil ? nil : text
    }
}

/// Why shared work could not start, in one line.
public struct SharedWorkError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
