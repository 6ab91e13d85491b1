@testable import CairnLibrary
import Foundation
import Testing

/// The library's path names are split on the byte `/`, as the kernel splits a path, and never on characters: a `/`
/// followed by a combining mark is one character, and still a folder's end on disk.
@Suite struct PathNameTests {
    @Test func aPathSplitsAtItsLastSlashByte() {
        #expect(FileSystem.baseName(of: "originals/ab/photo.jpg") == "photo.jpg")
        #expect(FileSystem.parentDirectory(of: "originals/ab/photo.jpg") == "originals/ab")
        #expect(FileSystem.baseName(of: "photo.jpg") == "photo.jpg")
        #expect(FileSystem.parentDirectory(of: "photo.jpg") == ".")
        #expect(FileSystem.parentDirectory(of: "/photo.jpg") == "/")
        #expect(FileSystem.baseName(of: "Été/Île.heic") == "Île.heic")
        // "/" then U+0301 (combining acute): one character, but the folder ends at the slash.
        #expect(FileSystem.baseName(of: "trip/\u{301}photo.jpg") == "\u{301}photo.jpg")
        #expect(FileSystem.parentDirectory(of: "trip/\u{301}photo.jpg") == "trip")
    }

    @Test func aTemporaryKeepsItsFinalNamesExtensionInItsFinalFoldersShard() throws {
        // `make` makes the shard it names.
        let root = NSTemporaryDirectory() + "cairn-path-names-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let layout = LibraryLayout(root: root)
        let name = TemporaryName.make(in: layout, for: "derived/0f/0f12-thumb.webp")
        #expect(name.hasPrefix(root + "/tmp/0f/0f12-thumb."))
        #expect(name.hasSuffix(".partial.webp"))
        #expect(FileSystem.parentDirectory(of: name) == layout.temporaryDirectory + "/0f")
        let plain = TemporaryName.make(in: layout, for: "albums/list")
        #expect(FileSystem.parentDirectory(of: plain) == layout.temporaryDirectory)
        #expect(FileSystem.baseName(of: plain).hasPrefix("list.") && plain.hasSuffix(".partial"))
        #expect(layout.temporaryDirectory(forFinal: "derived/\u{301}f/x") == layout.temporaryDirectory)
    }
}
