import CairnCatalog
import CairnCore
import CairnImmich
import CairnLibrary
import CairnMedia
import CairnScanner
import Foundation

/// Which Immich album each of a run's assets goes into: one album named on the command line, the source folder
/// a file sits in, or a Google Takeout album (its folder, titled by the folder's `metadata.json`).
package enum ImmichAlbums: Sendable, Hashable {
    case named(String)
    case sourceFolder
    case takeout

    /// The album of a file at `relativePath` under `sourceRoot`; nil leaves it out of every album. `folders`
    /// keeps each folder's album, so a Takeout folder's metadata is read once, not once per photo in it.
    func album(of relativePath: String, sourceRoot: String, folders: inout [String: String]) -> String? {
        switch self {
        case .named(let name): return name
        case .sourceFolder, .takeout:
            let folder = FileSystem.parentDirectory(of: sourceRoot + "/" + relativePath)
            if let known = folders[folder] { return known }
            let name = FileSystem.baseName(of: folder)
            let album = self == .takeout ? Self.takeoutTitle(inFolder: folder) ?? name : name
            folders[folder] = album
            return album
        }
    }

    /// A Takeout album folder's title, from the metadata file Google writes beside its photos (its name is
    /// localized: `TakeoutAlbumMetadata` tells it by its content).
    static func takeoutTitle(inFolder folder: String) -> String? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        for name in names.sorted() where TakeoutAlbumMetadata.isCandidate(name: name) {
            if let album = TakeoutAlbumMetadata(path: folder + "/" + name) {
                return album.name(folderName: FileSystem.baseName(of: folder))
            }
        }
        return nil
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
        var folders: [String: String] = [:]
        for asset in assets {
            guard let id = asset.remoteID,
                  let album = albums.album(of: asset.firstSourcePath, sourceRoot: sourceRoot, folders: &folders)
            else { continue }
            if let pair = try await catalog.pair(of: asset.checksum), pair.motion == asset.checksum { continue }
            members[album, default: []].append(id)
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
            } catch {
                throw refusedOrFailed(error)
            }
        }
        if added > 0 {
            lines.append("added \(added) asset\(added == 1 ? "" : "s") to \(filled) Immich album\(filled == 1 ? "" : "s")")
        }
        return lines + refused
    }
}
