import Foundation
@testable import Repository
import Testing

/// A silent network partition between a client process and the server: the client runs in a
/// network namespace of the test's own, joined to the server by a veth pair; nftables drops
/// every packet on arrival at both ends, while the link stays up (no RST, no FIN). Needs root,
/// `ip` and `nft` (`.ci/run` installs them).
@Suite("Network partition", .enabled(if: Partition.isPossible))
struct PartitionTests {
    @Test("a partition is reported within 30 s and the handle converges after the heal; a 5 s partition converges too")
    func silentPartition() async throws {
        let partition = try Partition()
        defer { partition.remove() }
        try await LocalServer.withThrowaway(tcpPort: 0, tcpAddress: partition.serverAddress) { server in
            let admin = Database(server.configuration, maximumConnections: 1)
            try await admin.query("ALTER ROLE postgres PASSWORD 'partition-pw'")
            try await migrateProject(admin)
            try await admin.query("CREATE TABLE contacts (id bigint PRIMARY KEY, name text NOT NULL, version bigint NOT NULL DEFAULT 1)")
            try await admin.query("SELECT live.enable_change_notifications('contacts')")
            try await admin.query("INSERT INTO contacts (id, name) VALUES (1, 'before')")

            let url = "host=\(partition.serverAddress) port=\(server.port) user=postgres password=partition-pw dbname=postgres"
            let worker = try partition.run(ConvergenceRun.worker, ["follow", "1"], environment: ["DATABASE_URL": url])
            let lines = Recorder<(at: ContinuousClock.Instant, line: String)>()
            worker.readOutputLines { lines.append((ContinuousClock.now, $0)) }
            defer { kill(worker.pid, SIGKILL); _ = worker.wait() }
            guard try await eventually(timeout: .seconds(30), { lines.all.contains { $0.line == "ready" } }) else {
                kill(worker.pid, SIGKILL)
                Issue.record("the worker did not start: \(String(decoding: worker.readErrors(), as: UTF8.self))")
                return
            }

            // A long partition: noticed, reported, and healed.
            try partition.cut()
            let cut = ContinuousClock.now
            try await admin.query("UPDATE contacts SET name = 'during' WHERE id = 1")
            #expect(try await eventually(timeout: .seconds(40)) { lines.all.contains { $0.line.contains("lost its connection") } })
            let noticed = lines.all.first { $0.line.contains("lost its connection") }.map { $0.at - cut }
            try partition.heal()
            let healed = ContinuousClock.now
            #expect(try await eventually(timeout: .seconds(30)) { lines.all.contains { $0.line == "value during" } })
            let converged = lines.all.first { $0.line == "value during" }.map { $0.at - healed }

            // A short one (5 s: the scenario's length, not a wait for an event).
            try partition.cut()
            try await admin.query("UPDATE contacts SET name = 'short' WHERE id = 1")
            try await Task.sleep(for: .seconds(5))
            try partition.heal()
            let shortHealed = ContinuousClock.now
            #expect(try await eventually(timeout: .seconds(30)) { lines.all.contains { $0.line == "value short" } })
            let shortConverged = lines.all.first { $0.line == "value short" }.map { $0.at - shortHealed }
            print("partition: reported \(noticed.map { "\($0)" } ?? "never") after the cut; converged \(converged.map { "\($0)" } ?? "never") after the heal; a 5 s partition converged \(shortConverged.map { "\($0)" } ?? "never") after its heal")
            #expect(noticed.map { $0 <= .seconds(40) } == true)  // the feed's bound: 10 s ping interval + 10 s deadline, with room for load
            admin.close()
        }
    }
}

/// A network namespace joined to this one by a veth pair, and the nftables rules that cut it off.
struct Partition {
    static let ip = executable("ip")
    static let nft = executable("nft")
    static var isPossible: Bool { geteuid() == 0 && ip != nil && nft != nil }

    let name: String
    let hostDevice: String
    let spaceDevice: String
    let serverAddress: String
    let clientAddress: String

    init() throws {
        let tag = String(UInt32.random(in: 0...0xFFFFF), radix: 16)
        name = "lp\(tag)"
        hostDevice = "lp\(tag)h"
        spaceDevice = "lp\(tag)n"
        let (a, b) = (UInt8.random(in: 1...250), UInt8.random(in: 1...250))
        serverAddress = "10.\(a).\(b).1"
        clientAddress = "10.\(a).\(b).2"
        try ip("netns", "add", name)
        try ip("link", "add", hostDevice, "type", "veth", "peer", "name", spaceDevice)
        try ip("link", "set", spaceDevice, "netns", name)
        try ip("addr", "add", "\(serverAddress)/30", "dev", hostDevice)
        try ip("link", "set", hostDevice, "up")
        try ip("netns", "exec", name, "ip", "addr", "add", "\(clientAddress)/30", "dev", spaceDevice)
        try ip("netns", "exec", name, "ip", "link", "set", spaceDevice, "up")
        try ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
    }

    /// Runs `program` inside the namespace.
    func run(_ program: String, _ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        let inherited = ProcessInfo.processInfo.environment.filter { $0.key != "DATABASE_URL" }
        return try ChildProcess(Self.ip!, ["netns", "exec", name, program] + arguments, environment: inherited.merging(environment) { $1 })
    }

    /// Drops every packet arriving at either end of the link.
    func cut() throws {
        try nft("add", "table", "netdev", name)
        try nft("add", "chain", "netdev", name, "cut", "{ type filter hook ingress device \(hostDevice) priority 0; policy drop; }")
        try ip("netns", "exec", name, Self.nft!, "add", "table", "netdev", name)
        try ip("netns", "exec", name, Self.nft!, "add", "chain", "netdev", name, "cut",
               "{ type filter hook ingress device \(spaceDevice) priority 0; policy drop; }")
    }

    func heal() throws {
        try nft("delete", "table", "netdev", name)
        try ip("netns", "exec", name, Self.nft!, "delete", "table", "netdev", name)
    }

    func remove() {
        _ = try? nft("delete", "table", "netdev", name)
        _ = try? ip("link", "del", hostDevice)
        _ = try? ip("netns", "del", name)
    }

    @discardableResult
    private func ip(_ arguments: String...) throws -> String { try ShellCommand.runSync(Self.ip!, arguments) }
    @discardableResult
    private func nft(_ arguments: String...) throws -> String { try ShellCommand.runSync(Self.nft!, arguments) }

    private static func executable(_ name: String) -> String? {
        ["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
