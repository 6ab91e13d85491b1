import CairnCatalog
import CairnCore
import CairnImmich
import CairnLibrary
import Foundation

/// Which Immich albums each of a run's assets goes into: one album named on the command line, the source folder a
/// file sits in, or the Google Takeout albums it belongs to (those the sidecar linker made from each album's
/// `metadata.json`, archives and split parts included).
package enum ImmichAlbums: Sendable, Hashable {
    case named(String)
    case sourceFolder
    case takeout

    /// The albums of `asset`; none leaves it out of every album.
    func albums(of asset: AssetRecord, catalog: any AssetCatalog) async throws -> [String] {
        switch self {
        case .named(let name): return [name]
        case .sourceFolder: return [FileSystem.baseName(of: FileSystem.parentDirectory(of: "/" + asset.firstSourcePath))]
        // A year folder (`Photos from 2023`) has no metadata file and is no album of Google's.
        case .takeout: return Array(Set(try await catalog.albums(of: asset.checksum).map(\.title))).sorted()
        }
    }
}

extension ImmichDestination {
    /// Puts the run's assets into their albums: each album found or created once, filled in one request. A Live
    /// Photo's movie stays out (it shows through its still).
    package func finishImport(runID: String, sourceRoot: String, catalog: any AssetCatalog) async throws -> [String] {
        let assets = try await catalog.assets(broughtInBy: runID)
        var lines = renameNote.map { [$0] } ?? []
        let kept = keptInTrash.withLock { $0 }
        if kept > 0 {
            lines.append("\(kept) file\(kept == 1 ? " is" : "s are") in Immich's trash and this API key may not restore "
                         + "\(kept == 1 ? "it" : "them") (it lacks asset.delete): left there")
        }
        let sent = try await sendSidecarMetadata(of: assets, runID: runID, catalog: catalog)
        if sent.updated > 0 {
            lines.append("sent what the Google Takeout JSON knew (dates, places, stars, captions, archived) of "
                         + "\(sent.updated) asset\(sent.updated == 1 ? "" : "s") to Immich")
        }
        lines += try await tagPeople(sent.people)
        guard let albums else { return lines }
        var members: [String: [String]] = [:]
        for asset in assets {
            guard let id = asset.remoteID else { continue }
            if let pair = try await catalog.pair(of: asset.checksum), pair.motion == asset.checksum { continue }
            for album in try await albums.albums(of: asset, catalog: catalog) { members[album, default: []].append(id) }
        }
        var added = 0, filled = 0
        var refused: [String] = []
        for (name, ids) in members.sorted(by: { $0.key < $1.key }) {
            // One album's refusal stops neither the others nor the run; a refused key does.
            do {
                try await client.addToAlbum(ids, albumID: try await client.album(named: name))
                added += ids.count
                filled += 1
            } catch where error.kind != .needsAuth {
                refused.append("album \(name) not filled: \(error.description)")
            } catch { throw error }  // A partial catch alone crashes Swift 6.3's SILGen here.
        }
        if added > 0 {
            lines.append("added \(added) asset\(added == 1 ? "" : "s") to \(filled) Immich album\(filled == 1 ? "" : "s")")
        }
        return lines + refused
    }
}
