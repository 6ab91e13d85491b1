import ArgumentParser
import CairnCore
import CairnImport
import CairnLibrary
import CairnStatus
import Foundation

/// Opening a library that must already exist, taking its lock, and turning failures into documented exit codes.
enum LibraryAccess {
    /// The layout of the library at `option`'s path, for what reads its files only (the journal), whichever catalog
    /// it keeps; an error naming the folder when nothing was ever imported there.
    static func existingLayout(_ option: LibraryOption) throws -> LibraryLayout {
        let root = try existingRoot(option)
        return LibraryLayout(root: FileSystem.resolved(root) ?? root)
    }

    /// Throws an error naming `root` unless a library was ever made there (a folder with no import yet, a wrong
    /// --library, an unmounted disk).
    static func requireLibrary(at root: String) throws {
        guard LibraryLayout.holdsLibrary(root) else {
            throw CommandError("\(root): no cairn library here (nothing imported yet, or a different --library?)")
        }
    }

    /// `option`'s path, once it holds a library; an error naming the folder otherwise.
    private static func existingRoot(_ option: LibraryOption) throws -> String {
        let root = option.resolvedPath
        try LibraryAccess.requireLibrary(at: root)
        return root
    }
}

/// A command-level failure with the sentence a person reads.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Parses SHA1 arguments (40 hex digits, any case) for `validate()`.
enum ChecksumArguments {
    static func parse(_ values: [String], option: String) throws -> [Checksum] {
        try values.map { value in
            guard let checksum = Checksum(hex: value.lowercased()) else {
                throw ValidationError("\(option) \(value): not a SHA1 (40 hex digits; see `cairn pending list`)")
            }
            return checksum
        }
    }
}
