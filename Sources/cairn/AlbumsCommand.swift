import ArgumentParser
import CairnCore
import CairnStatus
import Foundation

/// `cairn albums [--json]`
struct AlbumsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "albums",
        abstract: "List the library's albums (Google Takeout album folders) with their members.",
        discussion: """
            An album comes from a Google Takeout album folder: its title, description and date from the metadata \
            file Google writes beside its photos (`metadata.json`, or its localized name), which the library keeps \
            byte-identical. One line per album: date, number of members the library holds, title, folder. \
            `cairn ls --album TITLE` lists an album's members; `cairn asset` names an asset's albums.
            """)

    @OptionGroup var library: LibraryOption
    @OptionGroup var catalog: CatalogLocationOption

    @Flag(help: "Print one JSON object per album (title, description, date, members, folder, metadata), instead of text.")
    var json = false

    func run() async throws {
        try await browsing(library, catalog: catalog) { try show(try await $0.albums()) }
    }

    private func show(_ albums: [AlbumListing]) throws {
        let encoder = Timestamp.jsonEncoder()
        for album in albums {
            if json {
                Output.line(String(decoding: try encoder.encode(album), as: UTF8.self))
                continue
            }
            let date = album.date.map { String(Timestamp.toTheSecond($0).prefix(10)) } ?? "-"
            let members = "\(album.members) item\(album.members == 1 ? "" : "s")"
            Output.line("\(date.padding(toLength: 11, withPad: " ", startingAt: 0))"
                        + "\(members.padding(toLength: 12, withPad: " ", startingAt: 0)) \(album.title)  (\(album.folder))")
        }
    }
}
