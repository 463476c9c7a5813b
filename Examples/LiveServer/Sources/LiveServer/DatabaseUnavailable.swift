import Hummingbird
import Repository

/// Answers 503 Service Unavailable, with `Retry-After`, when a request fails because the
/// database cannot be reached — down, restarting, refusing connections — rather than the 500
/// an unknown error gets: the request was fine, and the same one later may succeed. The body
/// says so in one line; the error itself (which may name the host) goes to the log only.
struct DatabaseUnavailable<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as PostgresError where Self.isUnavailability(error) {
            context.logger.warning("database unavailable", metadata: ["error": "\(error)"])
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"], message: "the database is unavailable; try again")
        }
    }

    /// Whether `error` says the database could not be reached or is going away, not that the
    /// request was wrong: a connection that could not be opened or was lost, a closed pool,
    /// and the server's classes 08 (connection exception) and 57 (operator intervention:
    /// shutting down, starting up, a cancelled statement).
    static func isUnavailability(_ error: PostgresError) -> Bool {
        switch error.kind {
        case .connectionFailed, .connectionLost, .closed: true
        case .server: error.sqlState.map { $0.hasPrefix("08") || $0.hasPrefix("57") } ?? false
        default: false  // a configuration, a parameter or a statement that is wrong
        }
    }
}
