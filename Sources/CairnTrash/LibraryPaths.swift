import CairnLibrary
/// The rules for names the trash accepts, so no request can reach outside the library.
enum LibraryPaths {
    static let trashFolder = LibraryLayout.trashFolderName
    static let journalFile = LibraryLayout.journalFileName
    static let lockFile = LibraryLayout.lockFileName

    /// Why `path` is not a library-relative file path the trash may move, or nil when it is.
    static func problem(with path: String) -> String? {
        if path.isEmpty { return "is empty" }
        if path.hasPrefix("/") { return "is absolute; library paths are relative" }
        if path.utf8.contains(0) { return "contains a NUL byte" }
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        if components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) {
            return "has an empty, '.' or '..' component"
        }
        if components[0] == Substring(trashFolder) { return "is already inside the trash" }
        let first = String(components[0])
        if components.count == 1 && ([journalFile, lockFile].contains(first) || first.hasPrefix(LibraryLayout.catalogFileName)) {
            return "is one of the library's own control files"
        }
        return nil
    }

    /// Why `runID` cannot name a trash folder, or nil when it can.
    static func problem(withRunID runID: String) -> String? {
        if runID.isEmpty || runID.count > 200 { return "must be 1 to 200 characters" }
        if runID == "." || runID == ".." { return "must not be '.' or '..'" }
        let allowed = runID.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", ":", "+": return true
            default: return false
            }
        }
        return allowed ? nil : "may only hold letters, digits and . _ - : +"
    }

    static func validateRunID(_ runID: String) throws {
        if let problem = problem(withRunID: runID) { throw DeletionError("run id \(runID)", problem) }
    }
}
