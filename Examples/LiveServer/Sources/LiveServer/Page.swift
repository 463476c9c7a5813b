import Foundation
import HTTPTypes
import Hummingbird

/// `GET /`: the address book as a live page — one HTML file with its script and style, shipped
/// as a resource of this target.
///
/// Every response carries a fresh nonce in a Content-Security-Policy that runs only the page's
/// own script and style and loads nothing else: a name that slipped into the page as markup
/// would still not run (the page inserts names as text, never as HTML).
struct Page: Sendable {
    private let template: String

    /// Reads the page from the target's resources.
    init() throws {
        guard let url = Bundle.module.url(forResource: "index", withExtension: "html", subdirectory: "Page") else {
            throw HTTPError(.internalServerError, message: "the page is missing from the resources")
        }
        template = try String(contentsOf: url, encoding: .utf8)
    }

    /// The page, with a nonce of its own.
    func response() -> Response {
        let nonce = Data((0..<18).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let policy = "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; "
            + "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        let headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8", .cacheControl: "no-cache", .contentSecurityPolicy: policy,
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        ]
        let html = template.replacingOccurrences(of: "{{nonce}}", with: nonce)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
