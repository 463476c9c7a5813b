import CoreMetrics
import Foundation

/// The pool's and statements' metrics, through swift-metrics. Made once per pool; with no
/// backend bootstrapped, swift-metrics hands out no-op handlers, so recording costs a call.
struct PostgresMetrics: Sendable {
    let connectionsInUse: Gauge
    let connectionsIdle: Gauge
    let waiters: Gauge
    let waitTime: CoreMetrics.Timer
    let statementDuration: CoreMetrics.Timer
    /// How many statements each pipelined batch sent together (see ``Database/pipelined(_:_:)``).
    let pipelineBatchSize: Recorder
    let factory: any MetricsFactory

    init(factory: any MetricsFactory) {
        self.factory = factory
        connectionsInUse = Gauge(label: "postgres_pool_connections", dimensions: [("state", "in_use")], factory: factory)
        connectionsIdle = Gauge(label: "postgres_pool_connections", dimensions: [("state", "idle")], factory: factory)
        waiters = Gauge(label: "postgres_pool_waiters", factory: factory)
        waitTime = CoreMetrics.Timer(label: "postgres_pool_wait_duration", factory: factory)
        statementDuration = CoreMetrics.Timer(label: "postgres_statement_duration", factory: factory)
        pipelineBatchSize = Recorder(label: "postgres_pipeline_batch_size", factory: factory)
    }

    /// Counts a failed statement by its SQLSTATE class (`23` for integrity violations), or by
    /// the library's kind of failure when the server sent none.
    func statementFailed(_ error: any Error) {
        let kind: String
        switch error {
        case let error as PostgresError: kind = error.sqlState.map { String($0.prefix(2)) } ?? "\(error.kind)"
        case is CancellationError: kind = "cancelled"
        default: kind = "other"
        }
        Counter(label: "postgres_statement_errors", dimensions: [("sqlstate_class", kind)], factory: factory).increment()
    }
}

extension CoreMetrics.Timer {
    /// Records the time since `start`.
    func recordSince(_ start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}
