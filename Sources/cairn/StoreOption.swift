import ArgumentParser
import CairnConfiguration
import CairnCore
import CairnLibrary
import CairnS3
import Foundation

/// `--store s3://BUCKET/PREFIX`: where a library's files live when not in its folder.
struct StoreOption: ParsableArguments {
    @Option(name: .customLong("store"),
            help: "Keep the library's originals, sidecars and derived files in this S3-compatible store (s3://BUCKET/PREFIX) instead of its folder; a new library only, recorded at its first import; `cairn store move` moves an existing one (also $CAIRN_STORE, or `store` in cairn.toml).")
    var url: String?

    /// The store the library's files are in: the one it records (`.cairn-store`), which a flag, `$CAIRN_STORE` or
    /// cairn.toml may only repeat; for a new library, the one they name; nil: the folder.
    func location(libraryRoot: String) throws -> S3Location? {
        try Self.location(flag: url, libraryRoot: libraryRoot)
    }

    /// As `location(libraryRoot:)`, for a command without the flag (`sync`, `check`): `flag` nil.
    static func location(flag url: String?, libraryRoot: String) throws -> S3Location? {
        let named = try url ?? CairnConfiguration.forCommand(libraryRoot: libraryRoot).store
        let layout = LibraryLayout(root: libraryRoot)
        let recorded = layout.recordedStore
        switch (named.map(Self.parse), recorded.map(Self.parse)) {
        case (nil, nil): return nil
        case (nil, let recorded?): return try recorded.get()
        case (let named?, nil):
            let location = try named.get()
            guard !LibraryLayout.holdsLibrary(libraryRoot) else {
                throw ValidationError("\(libraryRoot) keeps its files in its folder: `cairn store move --to \(location)` "
                                      + "moves them onto the store, after which every command uses it")
            }
            return location
        case (let named?, let recorded?):
            let location = try named.get()
            guard location == (try recorded.get()) else {
                throw ValidationError("\(libraryRoot)'s files are in \(recorded) (\(layout.storeMarkerPath)), not in \(location)")
            }
            return location
        }
    }

    private static func parse(_ text: String) -> Result<S3Location, ValidationError> {
        do { return .success(try S3Location(parsing: text)) } catch { return .failure(ValidationError(error.description)) }
    }

    /// The store's client, the library's identity checked against the store's and its marker written first (nil:
    /// the folder). A store that cannot be reached, or that holds another library's files, stops the command here
    /// with its reason, before any file is read. `sharedCatalog`: the run's catalog is in PostgreSQL, which decides
    /// whether a new folder may be another folder of the store's library (`SharedCatalog`).
    static func open(_ location: S3Location?, libraryRoot: String, sharedCatalog: Bool) async throws -> S3Store? {
        guard let location else { return nil }
        let store = try await connect(location)
        do {
            try await claim(store, for: LibraryLayout(root: libraryRoot), sharedCatalog: sharedCatalog)
            try record(location, libraryRoot: libraryRoot)
        } catch {
            await store.close()
            throw Output.fail("\(location) cannot be used: \(error)")
        }
        return store
    }

    /// Records the library's identity in the store, or checks it is the one there. Two libraries with catalogs of
    /// their own must never share a store: objects are named by content, so one's `trash purge` or `check --repair`
    /// would delete files the other's catalog names.
    static func claim(_ store: S3Store, for layout: LibraryLayout, sharedCatalog: Bool) async throws {
        if let named = try await LibraryIdentity.read(from: store), LibraryIdentity.read(layout) == nil, !sharedCatalog {
            throw LibraryIdentityError("it holds the files of library \(named), and \(layout.root) has a catalog of its "
                                       + "own: name another prefix (or, for another folder of that library, its "
                                       + "PostgreSQL catalog with --catalog)")
        }
        try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
        _ = try await LibraryIdentity.ensure(layout, store: store)
    }

    /// The store's client once a listing has answered; a store that cannot be reached stops the command with its
    /// reason (exit 1).
    static func connect(_ location: S3Location) async throws -> S3Store {
        let store: S3Store
        do { store = try S3Store(settings: try S3Settings.resolve(location.description)) } catch {
            throw Output.fail("\(location): \(error)")
        }
        do { _ = try await store.list(prefix: "", after: nil, limit: 1) } catch {
            await store.close()
            throw Output.fail("\(location) cannot be used: \(error)")
        }
        return store
    }

    /// The store `libraryRoot` records (`.cairn-store`), connected, for a command that only works on an existing
    /// library (`restore`, `trash purge`); nil: its files are in its folder. `body` runs with it, then it closes.
    static func withRecorded<Value>(libraryRoot: String, _ body: (S3Store?) async throws -> Value) async throws -> Value {
        guard let recorded = LibraryLayout(root: libraryRoot).recordedStore else { return try await body(nil) }
        let location: S3Location
        do { location = try S3Location(parsing: recorded) } catch {
            throw Output.fail("\(LibraryLayout(root: libraryRoot).storeMarkerPath): \(error)")
        }
        let store = try await connect(location)
        return try await closing({ await store.close() }) { try await body(store) }
    }

    /// Writes the library's marker unless it is there: the library's files are in `location` from now on.
    static func record(_ location: S3Location, libraryRoot: String) throws {
        let layout = LibraryLayout(root: libraryRoot)
        guard layout.recordedStore == nil else { return }
        try FileManager.default.createDirectory(atPath: libraryRoot, withIntermediateDirectories: true)
        do { try LibraryLayout.writeMarker(location.description, at: layout.storeMarkerPath) } catch {
            throw ValidationError("cannot record the store in \(layout.storeMarkerPath): \(error)")
        }
    }
}
