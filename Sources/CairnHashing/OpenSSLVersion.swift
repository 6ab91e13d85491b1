import COpenSSL

/// The OpenSSL that hashes, as it reports itself at run time ("OpenSSL 3.0.17 1 Jul 2025").
public enum OpenSSLVersion {
    public static var current: String { String(cString: OpenSSL_version(OPENSSL_VERSION)) }
}
