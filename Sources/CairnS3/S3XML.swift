import CairnStore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// The parts of S3's XML answers cairn reads, through Foundation's XML parser: a listing's keys and sizes, and an
/// error's code and message.
final class S3XMLReader: NSObject, XMLParserDelegate {
    private(set) var path: [String] = []
    private var text = ""
    private let onElement: (_ path: [String], _ text: String) -> Void

    init(onElement: @escaping (_ path: [String], _ text: String) -> Void) {
        self.onElement = onElement
    }

    /// Whether the whole document parsed.
    static func read(_ bytes: [UInt8], onElement: @escaping (_ path: [String], _ text: String) -> Void) -> Bool {
        let reader = S3XMLReader(onElement: onElement)
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = reader
        return parser.parse()
    }

    func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        path.append(element)
        text = ""
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
        onElement(path, text)
        path.removeLast()
        text = ""
    }
}

/// A store's refusal: its HTTP status and, when the body is S3's `<Error>`, its code and message.
struct S3ErrorResponse {
    let status: Int
    var code = ""
    var message = ""

    /// Worth another try: the store is busy, restarting or asked us to slow down, or a conditional write raced.
    var isTransient: Bool {
        status >= 500 || status == 429 || code == "SlowDown" || code == "ConditionalRequestConflict"
            || code == "RequestTimeout" || status == 408
    }

    func storeError(key: String?, store: String, secrets: [String]) -> StoreError {
        let said = [code, message].filter { !$0.isEmpty }.joined(separator: ": ")
        let detail = said.isEmpty ? "HTTP \(status)" : "HTTP \(status) \(said)"
        let kind: StoreError.Kind
        let reason: String
        switch (status, code) {
        case (_, "NoSuchBucket"):
            kind = .missingStore
            reason = "\(store): the bucket does not exist (\(detail))"
        case (_, "RequestTimeTooSkewed"):
            kind = .clockSkew
            reason = "\(store): this machine's clock is too far from the store's for a signature to hold; set the "
                + "clock right (\(detail))"
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "AccessDenied"), (_, "InvalidToken"),
             (_, "ExpiredToken"), (401, _), (403, _):
            kind = .credentials
            reason = "\(store): the store refused the credentials or their permissions (\(detail))"
        case (_, "BadDigest"), (_, "XAmzContentChecksumMismatch"):
            kind = .contentMismatch
            reason = "\(store): the bytes sent are not the ones their checksum names (\(detail))"
        case (404, _), (_, "NoSuchKey"):
            kind = .missingObject
            reason = "\(store): no such object (\(detail))"
        case (500..., _), (429, _), (_, "SlowDown"):
            kind = .server
            reason = "\(store): the store failed (\(detail))"
        default:
            kind = .refused
            reason = "\(store): the store refused the request (\(detail))"
        }
        return StoreError(kind, key: key, Self.scrub(reason, secrets: secrets))
    }

    /// `text` without any secret in it: S3 error bodies can echo the access key id (`AWSAccessKeyId`), and a
    /// signature mismatch the string it signed.
    static func scrub(_ text: String, secrets: [String]) -> String {
        secrets.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }
}

extension S3ErrorResponse {
    /// `body` read as S3's `<Error>` (flat: its `Code` and `Message`); any other body leaves them empty.
    init(status: Int, body: [UInt8]) {
        self.init(status: status, code: S3XMLFields.first("Code", in: body) ?? "",
                  message: S3XMLFields.first("Message", in: body) ?? "")
    }
}

/// Fields of S3's flat XML records (`<Contents>`, `<Upload>`, `<Part>`) and single elements (`<UploadId>`, `<Code>`).
enum S3XMLFields {
    static func first(_ element: String, in body: [UInt8]) -> String? {
        var found: String?
        _ = S3XMLReader.read(body) { path, text in
            if found == nil && path.last == element { found = text }
        }
        return found
    }

    /// Each `element`'s `fields`, in document order; nil when the body is not whole XML.
    static func records(_ element: String, fields: Set<String>, in body: [UInt8]) -> [[String: String]]? {
        var records: [[String: String]] = []
        var current: [String: String] = [:]
        let whole = S3XMLReader.read(body) { path, text in
            if path.last == element {
                records.append(current)
                current = [:]
            } else if path.count >= 2, path[path.count - 2] == element, let field = path.last, fields.contains(field) {
                current[field] = text
            }
        }
        return whole ? records : nil
    }
}
