import Foundation

/// A TCP port on 127.0.0.1 this test holds, listening, so that a server cannot: bound to port
/// 0, the kernel's choice, so no other test takes it. Released when the value goes: keep it
/// with `withExtendedLifetime` while it must be held.
final class HeldPort {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0,
                                  sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound, listen(descriptor, 1) == 0 else {
            close(descriptor)
            throw TestSetupError("could not hold a TCP port: \(String(cString: strerror(errno)))")
        }
        (self.descriptor, port) = (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// How many connections to this port are established from this machine (`/proc/net/tcp`):
    /// a client that connected and now waits for an answer that never comes.
    var connectedClients: Int {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let port = String(format: "%04X", self.port)
        // Columns: sl, local address, remote address, state (01: established).
        return table.split(separator: "\n").dropFirst().count { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(":" + port) && fields[3] == "01"
        }
    }

    deinit { close(descriptor) }
}
