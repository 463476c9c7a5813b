import Foundation
@testable import Repository
import Testing

/// The example server's live page in a real browser: `Examples/LiveServer/BrowserTest/
/// live_page_test.py` drives headless Chromium (Debian's `chromium` and `chromium-driver`,
/// through Selenium from PyPI) against the real server and a real PostgreSQL, and writes the
/// screenshot README shows. `.ci/run` installs the browser; without it the test is cancelled,
/// saying what is missing.
@Suite("Example server: the page in a browser", .enabled(if: ExampleServer.isBuilt))
struct ExampleServerBrowserTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/LiveServer")

    /// python3, chromium and chromedriver, or what is missing.
    static func browser() -> Result<(python: String, chromium: String, driver: String), TestSetupError> {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        func find(_ name: String) -> String? {
            path.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        guard let python = find("python3") else { return .failure(TestSetupError("no python3 on PATH")) }
        guard let chromium = find("chromium") else { return .failure(TestSetupError("no chromium on PATH (apt-get install chromium)")) }
        guard let driver = find("chromedriver") else { return .failure(TestSetupError("no chromedriver on PATH (apt-get install chromium-driver)")) }
        guard let check = try? ChildProcess(python, ["-c", "import selenium"], environment: ProcessInfo.processInfo.environment),
              check.wait() == 0 else { return .failure(TestSetupError("\(python) cannot import selenium (pip install selenium)")) }
        return .success((python, chromium, driver))
    }

    @Test("the page lists, follows psql and another page, shows a 409 and a 4xx, keeps hostile names as text, and reconnects after a restart")
    func livePage() async throws {
        let browser: (python: String, chromium: String, driver: String)
        switch Self.browser() {
        case .success(let found): browser = found
        case .failure(let missing):
            print("Example server browser test cancelled: \(missing)")
            try Test.cancel("no browser: \(missing)")
        }
        let database = try await TestServer.makeDatabase()
        let binaries = try await ServerBinaries.locate()
        let psql = URL(fileURLWithPath: binaries.initdb).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("psql").path
        let arguments = [
            Self.example.appendingPathComponent("BrowserTest/live_page_test.py").path,
            "--server", ExampleServer.binary, "--database-url", try await TestServer.connectionString(database: database.name()),
            "--psql", psql, "--port", String(try FreePort.find()), "--chromium", browser.chromium, "--chromedriver", browser.driver,
            "--screenshot", Self.example.appendingPathComponent("screenshot.png").path,
        ]
        // Standard error joins standard output, so that neither pipe fills unread.
        let run = try ChildProcess("/bin/sh", ["-c", #"exec "$0" "$@" 2>&1"#, browser.python] + arguments,
                                   environment: ProcessInfo.processInfo.environment.merging(["LIVE_PAGE_PATIENCE": "10"]) { $1 })
        defer { if run.exitStatusIfExited() == nil { kill(run.pid, SIGKILL); _ = run.wait() } }
        let lines = Recorder<String>()
        run.readOutputLines { line in
            print("browser test: \(line)")
            lines.append(line)
        }
        var status: Int32?
        _ = try await eventually(timeout: .seconds(600)) {
            status = run.exitStatusIfExited()
            return status != nil
        }
        // The last lines may still be on their way from the pipe.
        _ = try await eventually { lines.all.contains { $0.hasPrefix("browser checks: ") } }
        for failure in lines.all where failure.hasPrefix("FAIL") { Issue.record(Comment(rawValue: failure)) }
        #expect(lines.all.contains { $0.hasPrefix("browser checks: ") && $0.hasSuffix(" held") })
        #expect(status == 0, "\(lines.all.joined(separator: "\n"))")
    }
}
