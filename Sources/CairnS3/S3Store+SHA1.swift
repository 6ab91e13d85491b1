import CairnCore
import CairnStore
import Foundation

/// A put that names its bytes' SHA1 (`x-amz-checksum-sha1`, signed) and sends them unsigned: the store checks the
/// bytes against it, so a file whose SHA1 the import already knows is sent without hashing it again (SHA1 for the
/// check and SHA-256 for the signature would otherwise both run over every byte).
extension S3Store: SHA1CheckingStore {
    public func checksSHA1() async throws(StoreError) -> Bool {
        if let known = sha1Checked.withLock({ $0 }) { return known }
        // A put whose header names other bytes: a store that checks refuses it (`BadDigest`) and writes nothing;
        // one that does not keeps it, and the probe is deleted again.
        let probe = try ObjectKey("cairn-probe-\(UInt64.random(in: 0 ... .max))")
        let checks: Bool
        do {
            _ = try await put(probe, bytes: Array("does this store check x-amz-checksum-sha1?".utf8),
                              sha1Header: Data(repeating: 0, count: Checksum.byteCount).base64EncodedString())
            try await delete(probe)
            checks = false
        } catch where error.kind == .contentMismatch {
            checks = true
        } catch where error.kind == .refused {
            checks = false  // a store that does not take the header at all
        }
        sha1Checked.withLock { $0 = checks }
        return checks
    }

    public func put(_ key: ObjectKey, bytes: [UInt8], sha1: Checksum) async throws(StoreError) -> PutOutcome {
        try await put(key, bytes: bytes, sha1Header: Data(sha1.bytes).base64EncodedString())
    }

    private func put(_ key: ObjectKey, bytes: [UInt8], sha1Header: String) async throws(StoreError) -> PutOutcome {
        let response = try await send("PUT", key: key, headers: [
            ("content-length", String(bytes.count)), ("if-none-match", "*"), ("x-amz-checksum-sha1", sha1Header),
            ("content-type", "application/octet-stream"),
        ], body: bytes, payloadHash: S3Signer.unsignedPayload, accepting: [200, 412])
        return response.status == 412 ? .alreadyThere : .created
    }
}
