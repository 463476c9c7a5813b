import Foundation
@testable import Repository
import Testing

/// Many statements of one pipeline giving up on a lock, the first among them.
@Suite("Pipelined lock timeouts")
struct PipelineLockTimeoutsTests {
    @Test("a batch where every third statement gives up on a locked row: the others commit, each answer is its own, the connection stays usable")
    func manyLockTimeouts() async throws {
        let configuration = try await TestServer.makeDatabaseConfiguration()
        let setup = try await Connection.connect(configuration)
        try await setup.execute(script: """
            CREATE TABLE items (id int PRIMARY KEY, n int NOT NULL);
            INSERT INTO items SELECT g, 0 FROM generate_series(1, 300) g;
            """)
        let locker = try await Connection.connect(configuration)
        try await locker.execute(script: "BEGIN; SELECT * FROM items WHERE id = 1 FOR UPDATE")
        let connection = try await Connection.connect(configuration)
        for round in 0..<3 {
            let ids = (0..<41).map { $0 % 3 == 0 ? 1 : 10 + $0 + round * 50 }
            let outcomes = try await connection.pipeline(ids.map { ("UPDATE items SET n = n + 1 WHERE id = $1 RETURNING *", [.text(String($0))]) })
            for (id, outcome) in zip(ids, outcomes) {
                switch outcome {
                case .success(let rows):
                    let written = try rows[0].decode(Int.self, column: "id")
                    #expect(id != 1 && written == id)
                case .failure(let error): #expect(id == 1 && error.sqlState == "55P03", "\(id): \(error)")
                }
            }
            let reusable = connection.isReusable.load(ordering: .relaxed)
            #expect(reusable)
        }
        try await locker.execute(script: "COMMIT")
    }
}
