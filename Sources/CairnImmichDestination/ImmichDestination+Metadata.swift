import CairnCatalog
import CairnCore
import CairnImmich
import CairnMedia
import Foundation

extension ImmichDestination {
    /// A capture time or place that only a Google Takeout JSON knew (the sidecar linker filled it into the probe),
    /// and what Google Photos knew of the photo (`GooglePhotosFacts`: star, caption, archived), reach Immich through
    /// `PUT /assets/{id}`: the upload carried the file's own dates only, and the JSON is read after it. Returns how
    /// many assets were updated, and the Immich ids of each person Google named.
    func sendSidecarMetadata(of assets: [AssetRecord], runID: String, catalog: any AssetCatalog) async throws
        -> (updated: Int, people: [String: [String]]) {
        var filled: [Checksum: MediaProbeRecord] = [:]
        for marker in ["\"takeout-json\"", "\"googlePhotos\""] {
            for record in try await catalog.mediaProbes(ofRun: runID, mentioning: marker) { filled[record.checksum] = record }
        }
        guard !filled.isEmpty else { return (0, [:]) }
        let remoteIDs = Dictionary(assets.compactMap { asset in asset.remoteID.map { (asset.checksum, $0) } },
                                   uniquingKeysWith: { first, _ in first })
        var sent = 0
        var people: [String: [String]] = [:]
        for record in filled.values.sorted(by: { $0.checksum.hex < $1.checksum.hex }) {
            guard let id = remoteIDs[record.checksum],
                  let probe = MediaProbe(storedJSON: record.probeJSON) else { continue }
            let time = probe.captureTime?.source == "takeout-json" ? probe.captureTime?.instant : nil
            let place = probe.gpsSource == "takeout-json" ? probe.gps : nil
            let google = probe.googlePhotos
            for name in google?.people ?? [] { people[name, default: []].append(id) }
            // A Live Photo's movie stays hidden behind its still, whatever its JSON says.
            var archive = google?.archived == true
            if archive, try await catalog.pair(of: record.checksum)?.motion == record.checksum { archive = false }
            guard time != nil || place != nil || google?.favorite == true || google?.description != nil || archive
            else { continue }
            // With an offset, never `Z`: Immich keeps the offset as the photo's time zone (`asset.service.ts`
            // `updateExif`, `utils/date.ts` `extractTimeZone`) and shows the wall time there. The photo's own EXIF
            // offset when it has one, else the run's zone (`--time-zone`, else this machine's) at that instant.
            let offset = probe.captureTime?.offset.flatMap(UTCOffset.parse)
            try await client.updateAsset(id, dateTimeOriginal: time.map {
                Timestamp.withMilliseconds($0, offsetSeconds: offset ?? timeZone.seconds(at: $0))
            }, latitude: place?.latitude, longitude: place?.longitude, visibility: archive ? .archive : nil,
                isFavorite: google?.favorite == true ? true : nil, description: google?.description)
            sent += 1
        }
        return (sent, people)
    }

    /// Google's people become tags `People/<name>`: Immich's own people come from its face recognition and cannot
    /// be named through its API. A key without the tag permissions is said, not failed: the rest of the run stands.
    func tagPeople(_ people: [String: [String]]) async throws -> [String] {
        guard !people.isEmpty else { return [] }
        let tagged = Set(people.values.joined()).count
        let missing = identity.missingPermissions(ImmichPermissions.tags)
        guard missing.isEmpty else {
            return ["the people Google Photos named in \(tagged) asset\(tagged == 1 ? "" : "s") were not sent: the API key "
                    + "lacks \(missing.sorted().joined(separator: ", "))"]
        }
        for (name, ids) in people.sorted(by: { $0.key < $1.key }) {
            // A `/` in a name would make a tag below it.
            let tag = try await client.upsertTag("People/" + name.replacingOccurrences(of: "/", with: " "))
            try await client.tag(ids, with: tag)
        }
        return ["tagged \(tagged) asset\(tagged == 1 ? "" : "s") with the \(people.count) "
                + "\(people.count == 1 ? "person" : "people") Google Photos named (People/<name>)"]
    }

    /// `--tag`, `--session-tag`: each tag made once (its parents too, as Immich makes them) and given to the run's
    /// uploaded assets in one request. The key's tag permissions were checked at connect.
    package func tag(_ assets: [AssetRecord], with tags: [String]) async throws -> [String] {
        let ids = assets.compactMap(\.remoteID)
        guard !ids.isEmpty else { return [] }
        for name in tags {
            try await client.tag(ids, with: try await client.upsertTag(name))
        }
        return []
    }
}

extension ImmichDestination {
    /// Each stack in one `POST /stacks`, primary first. The server answers for the whole stack: a refused one
    /// (a member it no longer has, say) waits for the next run and is named; a refused key stops the run.
    /// A key without `stack.create` is said, not failed (a key that ran unattended before stacks existed goes on
    /// working): the stacks wait in the catalog for a run whose key may make them.
    package func stack(_ stacks: [AssetStack], catalog: any AssetCatalog) async throws -> (made: [Checksum], notes: [String]) {
        let missing = identity.missingPermissions(ImmichPermissions.stacks)
        guard missing.isEmpty else {
            return ([], ["\(stacks.count) stack\(stacks.count == 1 ? "" : "s") not made in Immich: the API key lacks "
                         + missing.sorted().joined(separator: ", ") + " (a run whose key has it makes them; --stacks off "
                         + "keeps photos apart)"])
        }
        var made: [Checksum] = []
        var refused: [String] = []
        for stack in stacks {
            var ids: [String] = []
            for member in stack.members {
                if let id = try await catalog.asset(member)?.remoteID { ids.append(id) }
            }
            // A member not on the server yet (its upload failed): the stack waits until it is.
            guard ids.count == stack.members.count else { continue }
            do {
                _ = try await client.createStack(ids)
                made.append(stack.primary)
            } catch where error.kind != .needsAuth {
                refused.append("\(stack.primary.hex.prefix(12)): \(error.message)")
            } catch { throw error }  // A partial catch alone crashes Swift 6.3's SILGen here.
        }
        var notes: [String] = []
        if !made.isEmpty { notes.append("\(made.count) stack\(made.count == 1 ? "" : "s") made in Immich") }
        if !refused.isEmpty {
            notes.append("\(refused.count) stack\(refused.count == 1 ? "" : "s") not made in Immich (the next run tries again): "
                         + refused.prefix(3).joined(separator: "; ") + (refused.count > 3 ? "; ..." : ""))
        }
        return (made, notes)
    }
}
