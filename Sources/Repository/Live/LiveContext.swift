import CoreMetrics

/// What every live value of a repository shares: the read numbering, the conflict policy, where
/// errors go, the metrics and counts.
@usableFromInline
struct LiveContext: Sendable {
    let sequence: ReadSequence
    let policy: ConflictPolicy
    let report: @Sendable (LiveRecordError) -> Void
    let metrics: LiveMetrics
    /// The repository's count of rows read, and taken from the replication stream.
    let reads: Locked<ReadCount>
    /// The pool that values are read and written through.
    let database: Database
}

/// The change feed's and live values' metrics, through swift-metrics (no-op handlers when no
/// backend is bootstrapped): made once per repository.
struct LiveMetrics: Sendable {
    let notifications: Counter
    let reconnects: Counter
    let lag: CoreMetrics.Timer
    let liveValues: Gauge
    let rowsReread: Counter
    /// Rows taken from the replication stream without a read.
    let rowsStreamed: Counter
    let conflicts: Counter
    let writeDuration: CoreMetrics.Timer

    init(factory: any MetricsFactory) {
        notifications = Counter(label: "live_feed_changes", factory: factory)
        reconnects = Counter(label: "live_feed_reconnects", factory: factory)
        lag = CoreMetrics.Timer(label: "live_feed_lag", factory: factory)
        liveValues = Gauge(label: "live_values", factory: factory)
        rowsReread = Counter(label: "live_rows_reread", factory: factory)
        rowsStreamed = Counter(label: "live_rows_streamed", factory: factory)
        conflicts = Counter(label: "live_conflicts", factory: factory)
        writeDuration = CoreMetrics.Timer(label: "live_write_duration", factory: factory)
    }
}
