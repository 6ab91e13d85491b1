import Foundation
import OpenAPIRuntime

/// Immich ignores a multipart file part's own Content-Type (it goes by the file name), but the generated stubs
/// reject an `assetData` that is not `application/octet-stream`, and curl or a browser sends `image/jpeg`. This
/// drops, on the fly, every part-level Content-Type other than text/plain and application/json (which the stubs
/// accept); the body still streams chunk by chunk.
struct PartTypeRelaxer {
    private let delimiter: [UInt8]
    private var carry: [UInt8] = []
    private var inHeaders = false

    init(boundary: String) { delimiter = Array("--\(boundary)\r\n".utf8) }

    /// The multipart body of an upload with its part Content-Types relaxed; any other body as it is.
    static func relax(_ body: HTTPBody?, contentType: String?) -> HTTPBody? {
        guard let body, let contentType, contentType.lowercased().hasPrefix("multipart/form-data"),
              let boundary = boundary(in: contentType) else { return body }
        return HTTPBody(Relaxed(body: body, boundary: boundary), length: .unknown, iterationBehavior: .single)
    }

    /// Pulls from the client's body only as the reader asks, so a slow disk slows the socket instead of filling memory.
    struct Relaxed: AsyncSequence, Sendable {
        typealias Element = ArraySlice<UInt8>
        let body: HTTPBody
        let boundary: String

        struct AsyncIterator: AsyncIteratorProtocol {
            var upstream: HTTPBody.AsyncIterator
            var relaxer: PartTypeRelaxer
            var done = false

            mutating func next() async throws -> ArraySlice<UInt8>? {
                while !done {
                    if let chunk = try await upstream.next() {
                        let out = relaxer.feed(Array(chunk))
                        if !out.isEmpty { return out[...] }
                    } else {
                        done = true
                        let tail = relaxer.finish()
                        if !tail.isEmpty { return tail[...] }
                    }
                }
                return nil
            }
        }

        func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(upstream: body.makeAsyncIterator(), relaxer: PartTypeRelaxer(boundary: boundary))
        }
    }

    static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }

    mutating func feed(_ chunk: [UInt8]) -> [UInt8] {
        var data = carry + chunk
        carry = []
        var out: [UInt8] = []
        while !data.isEmpty {
            if inHeaders {
                guard let end = Self.find([13, 10, 13, 10], in: data) else { carry = data; return out }
                out += Self.rewrite(data[..<(end + 4)])
                data = Array(data[(end + 4)...])
                inHeaders = false
            } else if let start = Self.find(delimiter, in: data) {
                out += data[..<(start + delimiter.count)]
                data = Array(data[(start + delimiter.count)...])
                inHeaders = true
            } else {
                // Keep what could be the start of a delimiter split across chunks.
                let keep = min(data.count, delimiter.count - 1)
                out += data[..<(data.count - keep)]
                carry = Array(data[(data.count - keep)...])
                return out
            }
        }
        return out
    }

    mutating func finish() -> [UInt8] {
        defer { carry = [] }
        return carry
    }

    private static func rewrite(_ headers: ArraySlice<UInt8>) -> [UInt8] {
        let text = String(decoding: headers, as: UTF8.self)
        let lines = text.components(separatedBy: "\r\n").filter { line in
            let lower = line.lowercased()
            guard lower.hasPrefix("content-type:") else { return true }
            let value = lower.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
            return value.hasPrefix("text/plain") || value.hasPrefix("application/json")
        }
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        return haystack.withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { pin in
                var index = 0
                let last = hay.count - pin.count
                while index <= last {
                    if hay[index] == first {
                        var match = true
                        for offset in 1..<pin.count where hay[index + offset] != pin[offset] { match = false; break }
                        if match { return index }
                    }
                    index += 1
                }
                return nil
            }
        }
    }
}
