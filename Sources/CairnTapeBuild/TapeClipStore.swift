import CairnLibrary
import CairnMedia
import CairnStore
import Foundation

/// The tape side of a library whose files are in a store: the originals a clip decodes are read from the store
/// into the folder for as long as the clip takes, and each clip's files go to the store too (under the same
/// `tapes/.clips/<key>/` path), so a build in another folder of the library (another host, or this one's folder
/// emptied) takes them from there instead of encoding them again. The folder keeps its own copy of every clip:
/// it is what `cairn serve` plays.
public struct TapeClipStore: Sendable {
    public let store: any ObjectStore
    public let layout: LibraryLayout

    public init(store: any ObjectStore, layout: LibraryLayout) {
        self.store = store
        self.layout = layout
    }

    static var prefix: String { LibraryLayout.tapesFolderName + "/" + LibraryLayout.tapeClipsFolderName + "/" }

    /// The clips the store holds whole: those whose playlist is there (it is put last).
    func storedClips() async throws -> Set<String> {
        var clips = Set<String>()
        try await eachObject { object, clip, file in
            if file == TapeClipRequest.playlistName { clips.insert(clip) }
        }
        return clips
    }

    /// The store's files of clip `key`, written into `folder` (each whole or not at all).
    func fetch(_ key: String, into folder: String) async throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var after: ObjectKey?
        while true {
            let page = try await store.list(prefix: Self.prefix + key + "/", after: after, limit: 1000)
            guard let last = page.last else { return }
            after = last.key
            for object in page {
                let name = String(object.key.text.dropFirst(Self.prefix.count + key.count + 1))
                try await download(object.key, to: folder + "/" + name)
            }
        }
    }

    /// Puts clip `key`'s files from `folder`, its playlist last, so the store never holds a clip that looks whole
    /// and is not.
    func publish(_ key: String, from folder: String) async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }
        let ordered = names.filter { $0 != TapeClipRequest.playlistName }.sorted()
            + names.filter { $0 == TapeClipRequest.playlistName }
        for name in ordered {
            _ = try await store.put(try ObjectKey(Self.prefix + key + "/" + name), fromFile: folder + "/" + name)
        }
    }

    /// Reads the file at `path` (an original or a derived clip of the library) from the store unless the folder has
    /// it; the path to remove once the clip is made, or nil when the folder had it already.
    func fetchMedia(_ path: String) async throws -> String? {
        guard !FileManager.default.fileExists(atPath: path), path.hasPrefix(layout.root + "/") else { return nil }
        try await download(try ObjectKey(String(path.dropFirst(layout.root.count + 1))), to: path)
        return path
    }

    /// Deletes the store's clips that no tape shows (`keeping` names those a tape does). Returns how many went.
    public func prune(keeping: Set<String>) async throws -> Int {
        var unshown: [ObjectKey] = []
        var clips = Set<String>()
        try await eachObject { object, clip, _ in
            if !keeping.contains(clip) {
                unshown.append(object.key)
                clips.insert(clip)
            }
        }
        for key in unshown { try await store.delete(key) }
        return clips.count
    }

    private func download(_ key: ObjectKey, to path: String) async throws {
        let relative = String(path.dropFirst(layout.root.count + 1))
        let temporary = TemporaryName.make(in: layout, for: relative)
        try FileManager.default.createDirectory(atPath: (temporary as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try await store.download(key, to: path, via: temporary)
    }

    /// Each object under the clips' prefix, with its clip's key and file name.
    private func eachObject(_ body: (StoredObject, String, String) throws -> Void) async throws {
        var after: ObjectKey?
        while true {
            let page = try await store.list(prefix: Self.prefix, after: after, limit: 1000)
            guard let last = page.last else { return }
            after = last.key
            for object in page {
                let rest = object.key.text.dropFirst(Self.prefix.count)
                guard let slash = rest.firstIndex(of: "/") else { continue }
                try body(object, String(rest[..<slash]), String(rest[rest.index(after: slash)...]))
            }
        }
    }
}
