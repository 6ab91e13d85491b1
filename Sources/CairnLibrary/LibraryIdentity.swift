import CairnCore
import CairnStore
import Foundation
import Glibc

/// A library's name in a shared work queue and in its store: a UUID kept in the library folder (and beside the
/// files in a store), so every host finds the same library wherever it mounts it, a worker whose mount is missing
/// (an empty folder in its place) finds none and refuses to work instead of writing into the wrong disk, and a
/// store holds the files of one library only.
public enum LibraryIdentity {
    /// The identity of the library at `layout`, made and made durable when it has none yet (an import, holding
    /// the library's lock).
    public static func ensure(_ layout: LibraryLayout) throws -> String {
        try ensure(layout, proposing: UUID().uuidString.lowercased())
    }

    /// As `ensure(_:)`, naming a library without an identity `proposed`.
    private static func ensure(_ layout: LibraryLayout, proposing proposed: String) throws -> String {
        if let identity = read(layout) { return identity }
        // Made aside and linked into place, which never replaces: of two imports starting at once (the library's
        // lock comes later), the first to link names the library and the other reads that name.
        let temporary = layout.identityPath + ".\(getpid()).new"
        defer { unlink(temporary) }
        do {
            try Data((proposed + "\n").utf8).write(to: URL(fileURLWithPath: temporary))
            try FileSystem.syncFile(temporary)
            switch SystemCall.result({ link(temporary, layout.identityPath) }) {
            case .success, .failure(.fileExists): break
            case .failure(let code): throw SystemCallError("link", path: layout.identityPath, code: code)
            }
            try FileSystem.syncDirectory(layout.root)
        } catch {
            throw LibraryIdentityError("cannot record the library's identity in \(layout.identityPath): \(error)")
        }
        guard let identity = read(layout) else {
            throw LibraryIdentityError("\(layout.identityPath) holds no identity cairn wrote; move it aside")
        }
        return identity
    }

    /// The identity of the library at `layout`, nil when it has none (no import has used a queue there, or the
    /// folder is not the library: an unmounted disk).
    public static func read(_ layout: LibraryLayout) -> String? {
        guard let data = FileManager.default.contents(atPath: layout.identityPath) else { return nil }
        return parse(data)
    }

    private static func parse<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String? {
        let text = String(decoding: Array(bytes), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return UUID(uuidString: text) == nil ? nil : text
    }

    /// The identity's object in a library's store: beside the content's folders, which `cairn check` lists, so it
    /// is never taken for an orphan.
    public static let storeKey = "cairn-library-id"

    /// The identity of the library whose files are in `store`, for an import (`layout` its folder): the store's,
    /// which the folder records too; when the store has none yet, the folder's (made if need be), put into the
    /// store once. A folder and a store that name different libraries throw: the store holds another library.
    public static func ensure(_ layout: LibraryLayout, store: any ObjectStore) async throws -> String {
        if let named = try await read(from: store) {
            let identity = try ensure(layout, proposing: named)
            guard identity == named else {
                throw LibraryIdentityError("\(store.description) holds the files of library \(named), and \(layout.root) is "
                                      + "library \(identity) (\(layout.identityPath))")
            }
            return identity
        }
        let identity = try ensure(layout)
        let key = try ObjectKey(storeKey)
        do { _ = try await store.put(key, bytes: Array((identity + "\n").utf8)) } catch {
            throw LibraryIdentityError("cannot record the library's identity in \(store.description): \(error)")
        }
        // Of two imports naming one store at once, the first put wins, and the other refuses here.
        guard let named = try await read(from: store), named == identity else {
            throw LibraryIdentityError("\(store.description) was named by another library while \(layout.root) "
                                  + "(library \(identity)) was recording itself there")
        }
        return identity
    }

    /// The identity of the library whose files are in `store` (for a worker that has no library folder), nil when
    /// no import with a queue has named it yet.
    public static func read(from store: any ObjectStore) async throws -> String? {
        let key = try ObjectKey(storeKey)
        let bytes: [UInt8]
        do {
            guard try await store.size(of: key) != nil else { return nil }
            bytes = try await store.read(key, range: nil)
        } catch {
            throw LibraryIdentityError("cannot read the library's identity in \(store.description): \(error)")
        }
        guard let identity = parse(bytes) else {
            throw LibraryIdentityError("\(store.description)/\(storeKey) holds no identity cairn wrote")
        }
        return identity
    }
}

/// Why a library's identity could not be recorded or read, in one line.
public struct LibraryIdentityError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
