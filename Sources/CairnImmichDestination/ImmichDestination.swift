import CairnCatalog
import CairnCore
import CairnImmich
import CairnLibrary
import CairnMedia
import CairnPipeline
import CairnStages
import CairnTrash
import Foundation

/// An Immich server and account as an import's destination. cairn's own state for it (catalog, snapshots,
/// item states, run logs) lives in a state folder of its own under `<library>/immich/`, one per server and
/// user, so a second account on the same server never sees the first one's; an asset row there records the
/// content's Immich asset id (`AssetRecord.remoteID`).
package final class ImmichDestination: ImportDestination {
    package let client: ImmichClient
    package let identity: ImmichIdentity
    /// Where cairn keeps its state for this server and user.
    package let stateRoot: String
    /// Trashed assets this run brought back because the source still holds them.
    let restored = Locked(0)
    /// Trashed assets the source holds that this key may not restore (no `asset.delete`): left in Immich's trash.
    let keptInTrash = Locked(0)
    /// Files sent under another name this run (Immich types by extension): how many, and the first few.
    private let renames = Locked<(count: Int, examples: [String])>((0, []))

    /// `name` went to Immich as `uploadName`, an extension it takes.
    func renamed(_ name: String, as uploadName: String) {
        renames.withLock { renames in
            renames.count += 1
            if renames.examples.count < 3 { renames.examples.append("\(name) as \(uploadName)") }
        }
    }

    /// The run's line about the files sent under another name, if any.
    var renameNote: String? {
        renames.withLock { renames in
            guard renames.count > 0 else { return nil }
            return "sent \(renames.count) file\(renames.count == 1 ? "" : "s") under a name whose extension Immich takes "
                + "(\(renames.examples.joined(separator: ", "))\(renames.count > 3 ? ", ..." : "")); the library keeps "
                + "each file's own name"
        }
    }
    /// What the server holds of the pages prepared and not yet uploaded.
    private let presence = Locked<[Checksum: ImmichPresence]>([:])
    /// The run's cancellation: a refused key stops the run as a signal would.
    let cancellation: PipelineCancellation
    /// Which album each of the run's assets goes into (`--album`, `--album-from`), if any.
    let albums: ImmichAlbums?
    /// The zone of dates sent without an offset of their own (`--time-zone`, else this machine's).
    let timeZone: UTCOffset

    package var makesOwnDerivatives: Bool { true }
    /// An archive's entry of a photo's size is sent from memory (`ImmichStages.entryBytesInMemory`). The budget counts
    /// every item up to that size so, a file sent from disk too: the lane's rule does not tell them apart.
    package var holdsItemsInMemoryUpTo: Int64 { ImmichStages.entryBytesInMemory }

    /// Immich makes its own clips: no still waits for pairing.
    package func stillsAwaitingPairing() -> [ImportItem] { [] }

    package func pairingSettled(paired: Set<Checksum>) {}

    package var credentialsRefused: String? { client.keyRefused.withLock { $0?.description } }

    package var restoredFromTrash: Int { restored.withLock { $0 } }

    init(client: ImmichClient, identity: ImmichIdentity, stateRoot: String, cancellation: PipelineCancellation,
         albums: ImmichAlbums?, timeZone: UTCOffset = .local) {
        self.timeZone = timeZone
        self.cancellation = cancellation
        self.albums = albums
        self.client = client
        self.identity = identity
        self.stateRoot = stateRoot
    }

    /// Connects (ping, version, user, the key's permissions, the media types) and names the state folder for this
    /// server and user under `libraryRoot`. A key without a permission in `needs` is refused here, by name, before
    /// anything is sent.
    package static func connect(endpoint: ImmichEndpoint, key: ImmichAPIKey, libraryRoot: String,
                                uploads: Int, cancellation: PipelineCancellation, albums: ImmichAlbums? = nil,
                                needs: Set<String> = [], timeZone: UTCOffset = .local) async throws(ImmichFailure)
        -> ImmichDestination {
        let client = ImmichClient(endpoint: endpoint, key: key, connections: uploads)
        let identity: ImmichIdentity
        do { identity = try await client.connect() } catch {
            await client.close()
            throw error
        }
        let missing = identity.missingPermissions(needs)
        guard missing.isEmpty else {
            await client.close()
            let names = missing.sorted().joined(separator: ", ")
            throw ImmichFailure(
                kind: .needsAuth, operation: "connect", status: 403,
                message: "the API key lacks the permission\(missing.count == 1 ? "" : "s") \(names) that this run needs: "
                    + "give the key \(missing.count == 1 ? "it" : "them") in Immich (Account Settings, API Keys), or use "
                    + "a key with `all`; nothing was sent")
        }
        return ImmichDestination(
            client: client, identity: identity,
            stateRoot: stateRoot(libraryRoot: libraryRoot, endpoint: endpoint, userID: identity.userID),
            cancellation: cancellation, albums: albums, timeZone: timeZone)
    }

    /// `<library>/immich/<host and port>/<user id>`: readable, and a different folder per server and account.
    static func stateRoot(libraryRoot: String, endpoint: ImmichEndpoint, userID: String) -> String {
        let server = endpoint.description.replacingOccurrences(of: "://", with: "_")
            .map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" ? $0 : "_" }
        let user = userID.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" }
        return libraryRoot + "/immich/" + String(server) + "/" + String(user)
    }

    package func close() async { await client.close() }

    // MARK: ImportDestination

    /// Asks the server which of the page's contents it holds (one request per `ImmichClient.presencePage`) and brings back from Immich's
    /// trash what the source still holds; the upload lane finds the answers (`takePresence`).
    package func prepare(_ records: [ItemRecord], run: DestinationRun) async throws {
        let owing = records.filter { $0.state.owesTransfer }.map(\.item.checksum)
        guard !owing.isEmpty else { return }
        let found = try await client.presence(of: owing)
        let trashed = found.values.compactMap { presence -> String? in
            if case .trashed(let id) = presence { return id }
            return nil
        }
        if !trashed.isEmpty, identity.missingPermissions(ImmichPermissions.restoreFromTrash).isEmpty {
            try journalRestores(of: found, runID: run.runID, library: run.library)
            let count = try await client.restoreFromTrash(trashed)
            restored.withLock { $0 += count }
        } else if !trashed.isEmpty {
            // Restoring is `asset.delete`'s, which an import does not ask of a key: said, not failed.
            keptInTrash.withLock { $0 += trashed.count }
        }
        presence.withLock { $0.merge(found) { _, new in new } }
    }

    package func stages(for run: DestinationRun) -> any PipelineStages { ImmichStages(destination: self, run: run) }

    /// What the server held of a content before the lanes started (trashed ones already restored), forgotten once
    /// the upload lane has asked.
    func takePresence(of checksum: Checksum) -> ImmichPresence? {
        presence.withLock { $0.removeValue(forKey: checksum) }
    }

    /// Each restore from Immich's trash is journaled (fsynced) before it is asked for, as every trash action is.
    private func journalRestores(of presence: [Checksum: ImmichPresence], runID: String?, library: Library) throws {
        let journal = DeletionJournal(libraryRoot: library.layout.root)
        for (checksum, state) in presence {
            guard case .trashed(let id) = state else { continue }
            try journal.append(JournalEntry(runID: runID ?? "import", action: .restore, checksum: checksum,
                                            paths: [Self.journalPath(assetID: id)], timestamp: Date()))
        }
    }

    /// Immich links a still to its movie (`livePhotoVideoId`) and hides the movie from the timeline.
    /// One pair's failure stops no other (the next run tries it again); a refused key stops the run.
    package func link(_ pairs: [AssetPairRecord], catalog: any AssetCatalog) async throws -> [AssetPairRecord] {
        var linked: [AssetPairRecord] = []
        for pair in pairs {
            guard let still = try await catalog.asset(pair.still)?.remoteID,
                  let motion = try await catalog.asset(pair.motion)?.remoteID
            else { continue }
            do {
                try await client.updateAsset(motion, visibility: .hidden)
                try await client.updateAsset(still, livePhotoVideoID: motion)
                linked.append(pair)
            } catch where error.kind != .needsAuth {
                continue
            } catch { throw error }  // A partial catch alone crashes Swift 6.3's SILGen here.
        }
        return linked
    }

    // MARK: Where an asset lives

    /// How the deletion journal names an asset the server keeps (the asset's own id is `AssetRecord.remoteID`).
    static func journalPath(assetID: String) -> String { "immich:" + assetID }
}
