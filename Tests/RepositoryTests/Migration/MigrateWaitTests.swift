import Foundation
import Testing

/// `migrate wait --timeout N` is for start-up scripts: it ends within its timeout however the
/// other end behaves.
@Suite("migrate wait")
struct MigrateWaitTests {
    /// A TCP socket that takes connections (the kernel completes them) and never answers.
    final class SilentListener {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.descriptor = descriptor
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 16) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard bound else {
                close(descriptor)
                throw POSIXError(.EADDRNOTAVAIL)
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }
    }

    @Test("a server that takes the connection and never answers: wait gives up at its timeout, not libpq's connect_timeout, and shows no password")
    func silentServer() async throws {
        let listener = try SilentListener()
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("migrate").path
        let url = "postgresql://someone:Hunter2secret@127.0.0.1:\(listener.port)/db?connect_timeout=600"
        let wait = try ChildProcess(executable, ["wait", "--database-url", url, "--timeout", "1"], environment: [:])
        // libpq alone would wait 600 s for the silent server.
        #expect(try await eventually(timeout: .seconds(60)) { wait.exitStatusIfExited() != nil })
        if wait.exitStatusIfExited() == nil { kill(wait.pid, SIGKILL) }
        let completion = await wait.completion()
        #expect(completion.status != 0 && completion.text.contains("did not accept connections within 1 s"), "\(completion.text)")
        #expect(!completion.text.contains("Hunter2secret"), "\(completion.text)")
    }
}
