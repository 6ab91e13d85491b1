import CairnCatalog
import CairnCore
import CairnHashing
import CairnMedia

/// cairn's version and the libraries it runs with, for `cairn version --verbose`.
public enum ComponentVersions {
    public static var all: [(name: String, version: String)] {
        [("cairn", CairnVersion.current), ("SQLite", SQLiteCatalog.sqliteVersion), ("OpenSSL", OpenSSLVersion.current)]
            + MediaLibraries.versions
    }
}
