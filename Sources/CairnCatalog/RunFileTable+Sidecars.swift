import CairnCore
import Foundation
import GRDB

/// The run's sidecars: kept by folder as the walk finds them, and read back a folder at a time for linking.
extension RunFileTable {
    /// Appends sidecars the walk found (one transaction), kept by folder so they are read a folder at a time.
    public func appendSidecarsInPlace(_ files: [SourceFile]) throws {
        guard !files.isEmpty else { return }
        try catalog.pool.write { db in
            let insert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO temp.run_sidecar (folder, path, device, inode, size, mtime_ns)
                VALUES (?, ?, ?, ?, ?, ?)
                """)
            for file in files {
                try insert.execute(arguments: [
                    RelativePath.folder(of: file.relativePath), file.relativePath, Int64(bitPattern: file.fingerprint.device), Int64(bitPattern: file.fingerprint.inode),
                    file.fingerprint.size, file.fingerprint.modificationTimeNanoseconds,
                ])
            }
        }
    }

    /// Up to `limit` sidecars after `last`, by folder then path, that are not linked as they are now (a sidecar
    /// linked with the same path, size and modification time is left alone: a rescan reads none).
    public func sidecarsToLink(after last: RunSidecar?, limit: Int) async throws -> [RunSidecar] {
        try await catalog.write { db in
            try RunSidecarRow.fetchAll(db, sql: """
                SELECT folder, path AS relative_path, device, inode, size, mtime_ns, 'other' AS kind FROM temp.run_sidecar r
                WHERE (folder, path) > (?, ?)
                    AND NOT EXISTS (SELECT 1 FROM main.sidecar s WHERE s.source_path = r.path
                                    AND s.source_size = r.size AND s.source_mtime_ns = r.mtime_ns)
                ORDER BY folder, path LIMIT ?
                """, arguments: [last?.folder ?? "", last?.record.relativePath ?? "", limit]).map(\.sidecar)
        }
    }

    /// Path → checksum of the files with known content directly in `folder` ("" for the source root): what the
    /// sidecars there are matched against. A range of the path index (built once, when first asked).
    public func checksums(inFolder folder: String) async throws -> [String: Checksum] {
        try await catalog.write { db in
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS temp.run_file_path ON run_file(path)")
            let range = RunSidecar.pathRange(under: folder)
            let rows = folder.isEmpty
                ? try PathChecksumRow.fetchCursor(db, sql: """
                    SELECT path AS relative_path, sha1 FROM temp.run_file WHERE sha1 IS NOT NULL AND instr(path, '/') = 0
                    UNION ALL
                    SELECT relative_path, sha1 FROM main.source_file s WHERE s.source_id = \(sourceID)
                        AND instr(s.relative_path, '/') = 0 AND \(Self.isSettled("s.relative_path"))
                    """)
                : try PathChecksumRow.fetchCursor(db, sql: """
                    SELECT path AS relative_path, sha1 FROM temp.run_file WHERE path > ?1 AND path < ?2 AND sha1 IS NOT NULL
                    UNION ALL
                    SELECT relative_path, sha1 FROM main.source_file s WHERE s.source_id = \(sourceID)
                        AND s.relative_path > ?1 AND s.relative_path < ?2 AND \(Self.isSettled("s.relative_path"))
                    """, arguments: [range.after, range.before])
            var result: [String: Checksum] = [:]
            while let row = try rows.next() {
                guard RunSidecar.isDirectly(in: folder, row.relativePath) else { continue }
                if let checksum = Checksum(hex: row.sha1) { result[row.relativePath] = checksum }
            }
            return result
        }
    }
}
