import Foundation
import Repository

extension Cases {
    /// Reading, splitting and checking 1 MB of migration SQL (`Migrator([Migration(…)])`), and
    /// `status` on a directory like a production service's — 300 files, 1.3 MB, one of them
    /// 1,972 lines long — with every migration applied. Both must grow linearly with the SQL.
    /// A debug build (`swift run migrate`) is held to twice the release targets.
    func migrations() async throws -> [BenchResult] {
        #if DEBUG
        let (build, factor) = ("debug build: twice the release target", 2.0)
        #else
        let (build, factor) = ("release build", 1.0)
        #endif
        let runs = max(iterations / 50, 20)
        let megabyte = MigrationSQL.text(lines: 1_000_000 / MigrationSQL.bytesPerLine)
        var migrationCount = 0
        let parse = try await measureWithCPU(runs) {
            migrationCount += try Migrator([Migration(fileName: "0001_big.sql", contents: "-- migrate:up\n" + megabyte)]).migrations.count
        }
        let directory = try MigrationSQL.directory()
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        var migrator = try Migrator(directory: directory.path)
        migrator.historyTable = "bench_migrations"
        try await environment.database.query("DROP TABLE IF EXISTS bench_migrations")
        try await migrator.baseline(environment.database, through: migrator.migrations.last!.version)
        var applied = 0
        let status = try await measureWithCPU(runs) {
            var migrator = try Migrator(directory: directory.path)
            migrator.historyTable = "bench_migrations"
            applied = try await migrator.status(environment.database).filter { $0.state == .applied }.count
        }
        guard applied == 300, migrationCount == runs + 2 else { throw BenchError("status saw \(applied) of 300 migrations applied") }
        return [
            row("migrations: split and check 1 MB", parse, target: 50 * factor,
                note: String(format: "%d statements, %.2f MB; %@", megabyte.utf8.count / MigrationSQL.bytesPerStatement, Double(megabyte.utf8.count) / 1e6, build)),
            row("migrations: status, 300 files", status, target: 100 * factor,
                note: String(format: "%.2f MB in 300 files, the largest %d lines, all applied; read, checked and compared with the history; %@",
                              Double(directory.bytes) / 1e6, directory.largestLines, build)),
        ]
    }

    /// Wall-clock and process CPU time of each of `runs` runs, after two untimed ones.
    private func measureWithCPU(_ runs: Int, _ body: () async throws -> Void) async throws -> (wall: Samples, cpu: Samples) {
        var cpu = Samples()
        let wall = try await measure(runs, warmUp: 2) {
            let before = processCPUTime()
            try await body()
            cpu.add(processCPUTime() - before)
        }
        return (wall, Samples(cpu.values.suffix(runs)))
    }

    private func row(_ name: String, _ samples: (wall: Samples, cpu: Samples), target milliseconds: Double, note: String) -> BenchResult {
        let p50 = samples.wall.p50 / 1000
        return BenchResult(name: name, unit: "ms", library: p50, libraryP99: samples.wall.p99 / 1000, baseline: milliseconds,
                           baselineP99: nil, ratio: p50 / milliseconds, target: String(format: "p50 <= %.0f ms", milliseconds),
                           met: p50 <= milliseconds,
                           note: note + String(format: "; CPU in this process p50 %.1f ms", samples.cpu.p50 / 1000))
    }
}

/// Migration SQL of the kinds real projects hold: tables, indexes, comments, quoted strings
/// with semicolons, and functions with dollar-quoted bodies.
enum MigrationSQL {
    static let bytesPerLine = 40
    static let bytesPerStatement = 120

    /// About `lines` lines of SQL.
    static func text(lines: Int, seed: Int = 0) -> String {
        var text = ""
        var index = seed * 100_000
        while text.utf8.count < lines * bytesPerLine {
            index += 1
            text += """
                -- Table \(index): what it holds; why.
                CREATE TABLE t_\(index) (
                    id bigint PRIMARY KEY,
                    name text NOT NULL DEFAULT 'it''s; fine',
                    created_at timestamptz NOT NULL DEFAULT now()
                );
                CREATE INDEX t_\(index)_name ON t_\(index) (name);
                COMMENT ON TABLE t_\(index) IS 'table \(index); holds things';
                CREATE FUNCTION f_\(index)() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    NEW.created_at := now(); -- keep; it
                    RETURN NEW;
                END
                $$;
                INSERT INTO t_\(index) (id, name) VALUES (1, E'a\\'b;'), (2, 'c');
                /* a block; /* nested */ comment */ ALTER TABLE t_\(index) ADD COLUMN note text;

                """
        }
        return text
    }

    struct Directory {
        let path: String
        let bytes: Int
        let largestLines: Int
    }

    /// 300 migration files of 1.3 MB in all, one of them 1,972 lines long.
    static func directory() throws -> Directory {
        let path = FileManager.default.temporaryDirectory.path + "/bench-migrations-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let large = "-- migrate:up\n" + text(lines: 1_972 * 90 / 100).split(separator: "\n", omittingEmptySubsequences: false).prefix(1_970).joined(separator: "\n") + "\n-- migrate:down\n"
        var bytes = 0
        for number in 1...300 {
            let contents = number == 150 ? large : "-- migrate:up\n" + text(lines: 95, seed: number) + "-- migrate:down\nDROP TABLE t_\(number * 100_000 + 1);\n"
            bytes += contents.utf8.count
            try contents.write(toFile: path + String(format: "/2024%010d_step_%d.sql", number, number), atomically: true, encoding: .utf8)
        }
        return Directory(path: path, bytes: bytes, largestLines: large.split(separator: "\n", omittingEmptySubsequences: false).count)
    }
}
