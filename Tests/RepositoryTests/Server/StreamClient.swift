import Foundation
@testable import Repository

/// A bare HTTP/1.1 client over one TCP connection to 127.0.0.1, reading a response as it
/// streams: many event streams at once without a process each.
final class StreamClient: @unchecked Sendable {
    // @unchecked: used by one task at a time.
    private var fd: Int32
    private var received = Data()

    /// Connects to `port`.
    /// A connection to `port`; with `receiveBuffer`, the kernel holds at most about that many bytes
    /// the test has not read (`SO_RCVBUF`, set before connecting), so that a client not reading
    /// soon makes the server's writes wait.
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        // The socket is ours alone until `connect` succeeds: an init that throws with every
        // property set runs deinit, and a close here as well closed the number twice — by then
        // often another thread's libpq socket ("Bad file descriptor" in unrelated tests).
        // Close-on-exec: a process another test starts meanwhile (an example server, a test
        // worker — `ChildProcess` closes nothing) would otherwise inherit the socket and hold
        // the connection open after `close()`: the server would not see this client leave.
        #if canImport(Glibc)
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let socket = Foundation.socket(AF_INET, SOCK_STREAM, 0)
        if socket >= 0 { _ = fcntl(socket, F_SETFD, FD_CLOEXEC) }
        #endif
        guard socket >= 0 else { throw TestSetupError("socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer { _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            let reason = String(cString: strerror(errno))
            Foundation.close(socket)
            throw TestSetupError("connect: \(reason)")
        }
        fd = socket
    }

    /// Reads until the chunked response ends (its last, empty chunk) or the connection closes;
    /// whether it did within `timeout`. What arrives is kept.
    func readUntilResponseEnds(timeout: Duration) async throws -> Bool {
        let end = Data("\r\n0\r\n\r\n".utf8)
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            if Data(received.suffix(end.count)) == end { return true }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else {
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return true }
            received.append(contentsOf: buffer[0..<count])
        }
        return false
    }

    deinit { close() }

    /// Sends `GET path` with `headers`.
    func get(_ path: String, headers: [String: String] = [:]) throws {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        let sent = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        guard sent == request.utf8.count else { throw TestSetupError("send failed") }
    }

    /// Everything received so far, once it contains `marker`; throws after `timeout`. Waits
    /// by sleeping, not in `poll`: a test never blocks the cooperative pool.
    @discardableResult
    func read(until marker: String, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while !text.contains(marker) {
            guard ContinuousClock.now < deadline else { throw TestSetupError("no \(marker.debugDescription) within \(timeout); got \(text.debugDescription)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else {
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw TestSetupError("the connection ended before \(marker.debugDescription); got \(text.debugDescription)") }
            received.append(contentsOf: buffer[0..<count])
        }
        return text
    }

    /// Everything received so far.
    var text: String { String(decoding: received, as: UTF8.self) }

    /// Forgets what was received.
    func clear() { received = Data() }

    /// Closes the connection (the server sees the client leave).
    func close() {
        guard fd >= 0 else { return }
        Foundation.close(fd)
        fd = -1
    }
}
