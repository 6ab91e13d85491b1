import CairnCore
import CairnHashing
import CairnStore
import Foundation

/// Big objects go up in parts (`partSize`, 16 MiB unless set, at least S3's 5 MiB), `partsInFlight` at once, each
/// with its `Content-MD5` and its SHA-256 in the signature. An upload a kill interrupted is found again by key and
/// resumed: parts the store already holds with the right size and MD5 are not sent again.
extension S3Store {
    /// A file's bytes in `range`, read on the blocking pool; all of them, or a failure.
    static func readFile(_ path: String, range: Range<Int64>, key: ObjectKey) async throws(StoreError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try await BlockingPool.run { () throws -> [UInt8] in try LocalFile.read(path, range: range) }
        } catch let error as SystemCallError {
            throw StoreError(.system(FailureCategory(error.code)), key: key.text, error.description)
        } catch {
            throw StoreError(.system(.io), key: key.text, "\(path): \(error)")
        }
        guard bytes.count == range.count else {
            throw StoreError(.system(.io), key: key.text, "\(path): shrank while it was read")
        }
        return bytes
    }

    static func fileSize(_ path: String, key: ObjectKey) throws(StoreError) -> Int64 {
        do {
            return try LocalFile.size(path)
        } catch {
            throw StoreError(.system(FailureCategory(error.code)), key: key.text, error.description)
        }
    }

    /// One request's body with its SHA-256 (for the signature and `x-amz-checksum-sha256`): a whole object's put
    /// needs no MD5, the slowest of the three digests, which only parts (`Content-MD5`, their ETags) use.
    static func sha256(_ bytes: [UInt8], key: ObjectKey) throws(StoreError) -> [UInt8] {
        do {
            return try bytes.withUnsafeBytes { raw in
                Result { () throws(OpenSSLError) in try SHA256Digest.hash(raw) }
            }.get()
        } catch {
            throw StoreError(.system(.other), key: key.text, "\(error)")
        }
    }

    /// One request's body with its SHA-256 (hex, for the signature) and MD5 (base64, for `Content-MD5`).
    static func digests(_ bytes: [UInt8], key: ObjectKey) throws(StoreError) -> (sha256: [UInt8], md5: [UInt8]) {
        do {
            return try bytes.withUnsafeBytes { raw in
                Result { () throws(OpenSSLError) in (try SHA256Digest.hash(raw), try SHA256Digest.md5(raw)) }
            }.get()
        } catch {
            throw StoreError(.system(.other), key: key.text, "\(error)")
        }
    }

    func putInParts(_ key: ObjectKey, fromFile path: String, size: Int64) async throws(StoreError) -> PutOutcome {
        // A whole object already there costs one HEAD, not an upload.
        if try await self.size(of: key) != nil { return .alreadyThere }
        var parts: [(number: Int, range: Range<Int64>)] = []
        var start: Int64 = 0
        while start < size {
            let end = min(start + Int64(partSize), size)
            parts.append((parts.count + 1, start ..< end))
            start = end
        }
        let uploadID: String
        var held: [Int: (size: Int64, etag: String)] = [:]
        if let earlier = try await unfinishedUpload(of: key) {
            uploadID = earlier
            held = try await uploadedParts(of: key, uploadID: earlier)
        } else {
            let answer = try await send("POST", key: key, query: [("uploads", "")],
                                        headers: [("content-type", "application/octet-stream")], accepting: [200])
            guard let id = S3XMLFields.first("UploadId", in: answer.body) else {
                throw StoreError(.server, key: key.text, "the store's answer to starting an upload has no UploadId")
            }
            uploadID = id
        }
        let etags = try await uploadParts(parts, of: key, from: path, uploadID: uploadID, held: held)
        var document = "<CompleteMultipartUpload>"
        for number in etags.keys.sorted() {
            let etag: String = etags[number] ?? ""
            document += "<Part><PartNumber>\(number)</PartNumber><ETag>\(etag)</ETag></Part>"
        }
        document += "</CompleteMultipartUpload>"
        let body = Array(document.utf8)
        let answer = try await send("POST", key: key, query: [("uploadId", uploadID)],
                                    headers: [("content-type", "application/xml"), ("if-none-match", "*"),
                                              ("content-length", String(body.count))],
                                    body: body, payloadHash: try Self.sha256(body, key: key).lowercaseHex,
                                    accepting: [200, 412])
        // A 200 may still carry an error document (S3 sends its headers before it knows).
        if answer.status == 200, let code = S3XMLFields.first("Code", in: answer.body) {
            throw S3ErrorResponse(status: 500, code: code, message: S3XMLFields.first("Message", in: answer.body) ?? "")
                .storeError(key: key.text, store: description, secrets: secrets)
        }
        if answer.status == 412 {
            try await abortUpload(key, uploadID: uploadID)
            return .alreadyThere
        }
        return .created
    }

    private func uploadParts(_ parts: [(number: Int, range: Range<Int64>)], of key: ObjectKey, from path: String,
                             uploadID: String, held: [Int: (size: Int64, etag: String)])
        async throws(StoreError) -> [Int: String] {
        do {
            return try await withThrowingTaskGroup(of: (Int, String).self) { group in
                var etags: [Int: String] = [:]
                var next = parts.makeIterator()
                var running = 0
                while running < partsInFlight, let part = next.next() {
                    group.addTask { [self] in
                        (part.number, try await uploadPart(part.number, range: part.range, of: key, from: path,
                                                           uploadID: uploadID, held: held[part.number]))
                    }
                    running += 1
                }
                while let (number, etag) = try await group.next() {
                    etags[number] = etag
                    if let part = next.next() {
                        group.addTask { [self] in
                            (part.number, try await uploadPart(part.number, range: part.range, of: key, from: path,
                                                               uploadID: uploadID, held: held[part.number]))
                        }
                    }
                }
                return etags
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.network, key: key.text, "\(error)")
        }
    }

    private func uploadPart(_ number: Int, range: Range<Int64>, of key: ObjectKey, from path: String, uploadID: String,
                            held: (size: Int64, etag: String)?) async throws(StoreError) -> String {
        let bytes = try await Self.readFile(path, range: range, key: key)
        let sums = try Self.digests(bytes, key: key)
        let etag = "\"\(sums.md5.lowercaseHex)\""
        if let held, held.size == Int64(bytes.count), held.etag == etag { return etag }
        if let fault = partFault.withLock({ $0 })(number) { throw fault }
        let answer = try await send("PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
                                    headers: [("content-md5", Data(sums.md5).base64EncodedString()),
                                              ("content-length", String(bytes.count))],
                                    body: bytes, payloadHash: sums.sha256.lowercaseHex, accepting: [200])
        partsSent.withLock { $0 += 1 }
        return answer.header("etag") ?? etag
    }

    /// The newest upload of `key` the store has not completed or aborted.
    func unfinishedUpload(of key: ObjectKey) async throws(StoreError) -> String? {
        let uploads = try await unfinishedUploads(prefix: key.text)
        return uploads.filter { $0.key == key }.max { $0.initiated < $1.initiated }?.id
    }

    /// Uploads begun under `prefix` and never completed or aborted (first 1,000).
    public func unfinishedUploads(prefix: String) async throws(StoreError)
        -> [(key: ObjectKey, id: String, initiated: String)] {
        let answer = try await send("GET", key: nil, query: [("uploads", ""), ("prefix", settings.location.prefix + prefix)],
                                    accepting: [200])
        var uploads: [(key: ObjectKey, id: String, initiated: String)] = []
        for record in S3XMLFields.records("Upload", fields: ["Key", "UploadId", "Initiated"], in: answer.body) ?? [] {
            guard let full = record["Key"], full.hasPrefix(settings.location.prefix), let id = record["UploadId"],
                  let key = try? ObjectKey(String(full.dropFirst(settings.location.prefix.count))) else { continue }
            uploads.append((key, id, record["Initiated"] ?? ""))
        }
        return uploads
    }

    func uploadedParts(of key: ObjectKey, uploadID: String) async throws(StoreError) -> [Int: (size: Int64, etag: String)] {
        let answer = try await send("GET", key: key, query: [("uploadId", uploadID)], accepting: [200, 404])
        guard answer.status == 200 else { return [:] }
        var parts: [Int: (size: Int64, etag: String)] = [:]
        for record in S3XMLFields.records("Part", fields: ["PartNumber", "Size", "ETag"], in: answer.body) ?? [] {
            guard let number = record["PartNumber"].flatMap(Int.init), let size = record["Size"].flatMap(Int64.init)
            else { continue }
            parts[number] = (size, record["ETag"] ?? "")
        }
        return parts
    }

    func abortUpload(_ key: ObjectKey, uploadID: String) async throws(StoreError) {
        _ = try await send("DELETE", key: key, query: [("uploadId", uploadID)], accepting: [200, 204, 404])
    }

    /// Aborts the store's uploads begun before `date` and never finished (a kill, a crash), of the first 1,000 it
    /// lists: the store otherwise keeps, and bills, their parts. Returns how many it aborted.
    public func clearWrites(begunBefore date: Date) async throws(StoreError) -> Int {
        var aborted = 0
        for upload in try await unfinishedUploads(prefix: "") {
            guard let begun = Timestamp.parse(upload.initiated), begun < date else { continue }
            try await abortUpload(upload.key, uploadID: upload.id)
            aborted += 1
        }
        return aborted
    }
}

extension S3Store: AbandonedWritesStore {}
