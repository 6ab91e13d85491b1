import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// What every request but `/healthz` passes before it is answered.
///
/// - **Host**: on a loopback address, the `Host` header must name this machine, so a page elsewhere cannot reach the
///   server through a DNS name made to point at 127.0.0.1 (DNS rebinding). Beyond loopback the token guards.
/// - **Token** (`--token-file`): `Authorization: Bearer <token>`, or the `cairn_token` cookie a browser gets from the
///   sign-in form or from one visit with `?token=` (an `EventSource` cannot send headers). The cookie is HttpOnly and
///   SameSite=Strict; every comparison takes the same time whatever the token's first difference.
struct AccessGuard<Context: RequestContext>: RouterMiddleware {
    let token: String?
    let listen: ListenAddress

    static var cookieName: String { "cairn_token" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if listen.isLoopback, !Self.namesThisMachine(request.head.authority) {
            return Self.plain(.misdirectedRequest,
                              "this server answers to \(listen) (or localhost); the Host header named another\n")
        }
        guard let token else { return try await next(request, context) }
        let path = request.uri.path
        if path == "/signin" { return try await next(request, context) }
        if let bearer = request.headers[.authorization], Self.same(bearer, "Bearer " + token) {
            return try await next(request, context)
        }
        if let cookie = Self.cookie(Self.cookieName, in: request.headers[values: .cookie]), Self.same(cookie, token) {
            return try await next(request, context)
        }
        if request.method == .get, let given = request.uri.queryParameters["token"].map(String.init) {
            // One visit with ?token= signs the browser in, and the address bar forgets the token at once.
            guard Self.same(given, token) else { return Self.signInPage(status: .unauthorized, failed: true) }
            return Self.signedIn(token: token, redirectTo: path)
        }
        if request.headers[.accept]?.contains("text/html") == true { return Self.signInPage(status: .unauthorized, failed: false) }
        var response = Self.plain(.unauthorized, "a bearer token is needed (or sign in at /signin)\n")
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// `POST /signin` with the form's `token`.
    func signIn(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: 16 * 1024)
        let form = String(buffer: body)
        let given = form.split(separator: "&").lazy.compactMap { pair -> String? in
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0] == "token" else { return nil }
            return parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }.first
        guard let token, let given, Self.same(given.trimmingCharacters(in: .whitespacesAndNewlines), token) else {
            return Self.signInPage(status: .unauthorized, failed: true)
        }
        return Self.signedIn(token: token, redirectTo: "/")
    }

    private static func signedIn(token: String, redirectTo path: String) -> Response {
        var headers = HTTPFields()
        let value = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        headers[.setCookie] = "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict"
        headers[.location] = path.hasPrefix("/") && !path.hasPrefix("//") ? path : "/"
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// The sign-in form: one field, posted to this server only.
    static func signInPage(status: HTTPResponse.Status, failed: Bool) -> Response {
        let message = failed ? "<p class=\"reason\">That token is not this server's.</p>" : ""
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>cairn · sign in</title></head>
            <body><h1>cairn · sign in</h1>\(message)
            <form method="post" action="signin"><label for="token">Token (the contents of the server's --token-file)</label><br>
            <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
            <button type="submit">Sign in</button></form></body></html>
            """
        var response = Response.whole(status: status, "text/html; charset=utf-8", ByteBuffer(string: html))
        response.headers[.contentSecurityPolicy] = StatusPage.contentSecurityPolicy
        return response
    }

    private static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response.whole(status: status, "text/plain; charset=utf-8", cache: nil, ByteBuffer(string: text))
    }

    /// Whether a `Host` value (`name`, `name:port`, `[v6]:port`) names this machine.
    static func namesThisMachine(_ host: String?) -> Bool {
        guard var name = host?.lowercased(), !name.isEmpty else { return false }
        if name.hasPrefix("[") {
            name = String(name.dropFirst().prefix { $0 != "]" })
        } else if let colon = name.lastIndex(of: ":") {
            name = String(name[..<colon])
        }
        return name == "localhost" || name == "::1" || name.hasPrefix("127.") && name.split(separator: ".").count == 4
            && name.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }

    /// The value of cookie `name` among the `Cookie` header's values.
    static func cookie(_ name: String, in values: [String]) -> String? {
        for value in values {
            for pair in value.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == name { return String(parts[1]).removingPercentEncoding }
            }
        }
        return nil
    }

    /// Equal, compared in time that does not depend on where the two first differ.
    static func same(_ given: String, _ expected: String) -> Bool {
        var difference = UInt8(given.utf8.count == expected.utf8.count ? 0 : 1)
        for (a, b) in zip(given.utf8, expected.utf8) { difference |= a ^ b }
        return difference == 0
    }
}

extension Response {
    /// A whole body of content type `type`; `cache` its Cache-Control (none when nil).
    static func whole(status: HTTPResponse.Status = .ok, _ type: String, cache: String? = "no-store",
                      _ body: ByteBuffer) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        if let cache { headers[.cacheControl] = cache }
        return Response(status: status, headers: headers, body: .init(byteBuffer: body))
    }
}
