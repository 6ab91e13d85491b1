import CairnCore
import Glibc
import SystemPackage

extension ObjectStore {
    /// How much of an object one request of `download` reads.
    public static var downloadChunk: Int64 { 16 << 20 }

    /// Reads `key` into a new file at `path`, a chunk per request: written at `temporary` (on the same file
    /// system), then renamed into place, so a kill never leaves a partial file at `path`. The folder above `path`
    /// must exist; `temporary` is gone afterwards whatever happens.
    public func download(_ key: ObjectKey, to path: String, via temporary: String) async throws(StoreError) {
        let descriptor: Int32
        switch SystemCall.result({ open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }) {
        case .success(let opened): descriptor = opened
        case .failure(let code): throw StoreError(.system(FailureCategory(code)), key: key.text, "\(SystemCallError("open", path: temporary, code: code))")
        }
        var closed = false
        defer {
            if !closed { close(descriptor) }
            unlink(temporary)
        }
        var offset: Int64 = 0
        while true {
            let bytes = try await read(key, range: offset ..< offset + Self.downloadChunk)
            if offset == 0, bytes.isEmpty, try await size(of: key) == nil {
                throw StoreError(.missingObject, key: key.text, "is not in \(description)")
            }
            // The write blocks: on the pool, as every blocking call.
            let failed: SystemCallError?
            do {
                failed = try await BlockingPool.run {
                    bytes.withUnsafeBytes { buffer -> SystemCallError? in
                        do throws(SystemCallError) { try writeFully(descriptor, buffer, path: temporary); return nil } catch {
                            return error
                        }
                    }
                }
            } catch {
                throw StoreError(.system(.other), key: key.text, "not written to \(temporary): \(error)")
            }
            if let failed {
                throw StoreError(.system(FailureCategory(failed.code)), key: key.text, failed.description)
            }
            offset += Int64(bytes.count)
            if Int64(bytes.count) < Self.downloadChunk { break }
        }
        closed = true
        guard close(descriptor) == 0 else { throw StoreError(.system(.io), key: key.text, "closing \(temporary) failed") }
        if case .failure(let code) = SystemCall.result({ rename(temporary, path) }) {
            throw StoreError(.system(FailureCategory(code)), key: key.text, "\(SystemCallError("rename", path: path, code: code))")
        }
    }
}
