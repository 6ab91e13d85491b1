/// Files and folders that are never media: OS and NAS droppings, and cairn's own files.
public enum JunkRules {
    static let junkFileNames: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini", ".localized"]
    static let junkDirectoryNames: Set<String> = [
        "@eaDir", ".Trashes", ".Spotlight-V100", ".fseventsd", ".TemporaryItems", "lost+found", ".thumbnails",
    ]

    public static func isJunkFile(_ name: String) -> Bool {
        junkFileNames.contains(name) || name.hasPrefix("._") || name.hasPrefix(".cairn")
    }

    public static func isJunkDirectory(_ name: String) -> Bool {
        junkDirectoryNames.contains(name) || name.hasPrefix(".cairn")
    }
}
