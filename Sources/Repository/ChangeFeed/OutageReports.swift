/// Which failures of a feed's outage are reported: the first, at once; after it, a way of
/// failing that differs from every one reported, once retries have failed that way and no other
/// for ``persisting`` — a slot that cannot be made anew, a login refused since, a server down
/// for long — and never the steps of an ordinary restart (refused, then starting up), which
/// pass within seconds. Retries failing as reported stay quiet.
struct OutageReports {
    /// How long retries must fail the same new way before it is reported.
    let persisting: Duration

    private var reported: Set<String> = []
    private var last: (failure: String, since: ContinuousClock.Instant)?

    init(persisting: Duration = .seconds(30)) {
        self.persisting = persisting
    }

    /// Whether the feed is in an outage (a failure was reported since it last listened).
    var isInOutage: Bool { !reported.isEmpty }

    /// An attempt failed `now`, as `failure` says: whether to report it.
    mutating func failed(_ failure: String, at now: ContinuousClock.Instant = .now) -> Bool {
        let since = last?.failure == failure ? last?.since ?? now : now
        last = (failure, since)
        guard reported.isEmpty || (now - since >= persisting && !reported.contains(failure)) else { return false }
        reported.insert(failure)
        return true
    }

    /// The feed listens: the outage, if any, is over; whether there was one.
    mutating func listens() -> Bool {
        defer { self = OutageReports(persisting: persisting) }
        return isInOutage
    }
}
