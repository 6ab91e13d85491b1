import COpenSSL

/// A failed libcrypto call: the operation and OpenSSL's own error text.
public struct OpenSSLError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let message: String
    public var description: String { "\(operation) failed: \(message)" }
}

/// The one funnel every libcrypto return code passes through (EVP calls return 1 on success).
@inline(__always)
func check(_ returnCode: Int32, _ operation: StaticString) throws(OpenSSLError) {
    guard returnCode == 1 else { throw OpenSSLError(operation: "\(operation)", message: lastOpenSSLErrorText()) }
}

/// The same funnel for calls that return a handle, NULL on failure.
@inline(__always)
func require<Handle>(_ handle: Handle?, _ operation: StaticString) throws(OpenSSLError) -> Handle {
    guard let handle else { throw OpenSSLError(operation: "\(operation)", message: lastOpenSSLErrorText()) }
    return handle
}

func lastOpenSSLErrorText() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    COpenSSL_last_error_string(&buffer, buffer.count)
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return text.isEmpty ? "no OpenSSL error text" : text
}
