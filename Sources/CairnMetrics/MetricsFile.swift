import CairnCore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes an exposition the way node_exporter's textfile collector needs it: to a temporary name in the same
/// folder (which the collector ignores: it reads only `*.prom`), flushed to disk, then renamed over the file, so a
/// scrape sees the old text or the new, never half of one.
public enum MetricsFile {
    public static func write(_ text: String, to path: String) throws(SystemCallError) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let temporary = folder + "/." + url.lastPathComponent + ".\(getpid()).tmp"
        let descriptor = try SystemCall.check(open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644), "open", temporary)
        do throws(SystemCallError) {
            let bytes = Array(text.utf8)
            let written = bytes.withUnsafeBytes { buffer -> SystemCallError? in
                do throws(SystemCallError) { try writeFully(descriptor, buffer, path: temporary); return nil } catch { return error }
            }
            if let written { throw written }
            try SystemCall.check(fsync(descriptor), "fsync", temporary)
            try SystemCall.check(close(descriptor), "close", temporary)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        do throws(SystemCallError) {
            try SystemCall.check(rename(temporary, path), "rename", path)
        } catch {
            unlink(temporary)
            throw error
        }
        // The rename is durable once the folder is.
        let folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }
}
