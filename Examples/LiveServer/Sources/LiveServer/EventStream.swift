import Foundation
import Hummingbird

/// A response of Server-Sent Events that ends when its client leaves.
///
/// It writes `events` as they come and a comment every `heartbeat`, and ends when the events
/// end (the server shuts down), when the client closes its side of the connection, or when a
/// write fails — the heartbeat makes a write happen even when nothing changes, so a client that
/// vanished without closing is noticed once TCP gives up on it (minutes, with Linux's defaults).
/// A client that stops reading while still connected falls behind: at ``backlogLimit`` events
/// not yet written its stream stops taking events (a browser reconnects and catches up from
/// its `Last-Event-ID`), so that what the server holds for it is bounded.
///
/// Hummingbird keeps a connection whose client half-closed it open, and a streaming response
/// does not read from it: without watching the request's inbound side, a stream whose client
/// left would stay in `CLOSE_WAIT`, holding its descriptor and its live handle, until a write
/// to it failed.
enum EventStream {
    /// `events` (each one or more complete SSE fields ending in a blank line) as the response to
    /// `request`.
    static func response<Events: AsyncSequence<String, Never> & Sendable>(
        to request: Request, _ events: Events, heartbeat: Duration
    ) -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // Cancelled when the client closes its side: the loops below end.
            try await request.body.consumeWithCancellationOnInboundClose { _ in
                try await stream(events, heartbeat: heartbeat, to: &writer)
            }
            try await writer.finish(nil)
        })
    }

    /// The most events held for a client that has not read them yet.
    static let backlogLimit = 32

    /// Writes `events` and heartbeats until the events end, the task is cancelled, a write fails,
    /// or the client falls ``backlogLimit`` events behind (the events it has are still written).
    private static func stream(_ events: some AsyncSequence<String, Never> & Sendable, heartbeat: Duration,
                               to writer: inout some ResponseBodyWriter) async throws {
        let (output, sink) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingOldest(backlogLimit))
        // Browsers reconnect a second after the stream breaks (a restart, a network blip).
        sink.yield("retry: 1000\n\n")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    // Behind: stop taking events (their source lets this client go), end the stream.
                    if case .dropped = sink.yield(event) { break }
                }
                sink.finish()
            }
            group.addTask {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    sink.yield(": heartbeat\n\n")
                }
            }
            // A write that fails throws out of the group: the tasks above are cancelled.
            for await text in output { try await writer.write(ByteBuffer(string: text)) }
            group.cancelAll()
        }
    }

    /// One event: `event: name`, `id:` when given, and `data` (one line of JSON).
    static func event(_ name: String, id: String? = nil, data: String) -> String {
        (id.map { "id: \($0)\n" } ?? "") + "event: \(name)\ndata: \(data)\n\n"
    }
}
