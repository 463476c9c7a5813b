/// The write loop: one per store at a time, started when an edit leaves fields to write; it
/// sends them, takes in what became of them, and ends once nothing is left to write.
extension LiveStore {
    func writeLoop() async {
        while let write = nextWrite() {
            // Its base may be a streamed row whose commit new snapshots do not see yet: the
            // UPDATE would find the row before it, match nothing, and be refused. Once the write
            // is under way no streamed row is taken, so a hold up now covers its base.
            await sequence.readsMayStart()
            let outcome: WriteOutcome<Content>
            let start = ContinuousClock.now
            do {
                outcome = try await table.write(write, id: id)
                metrics.writeDuration.recordSince(start)
            } catch {
                let failure = error as? PostgresError ?? PostgresError(.server, "\(error)")
                transition { $0.writeFailed(.writeFailed(table: table.shownName, key: keyText, failure)) }
                continue
            }
            switch outcome {
            case .written(let row):
                let number = sequence.next()  // numbered on arrival: reads that started earlier are older
                transition { $0.writeSucceeded(row, sequence: number, isWriteResult: true) }
            case .unchanged:
                transition { $0.writeCommitted() }
            case .committed:
                let number = await sequence.nextRead()
                do {
                    let row = try await table.read([id]).first?.committed
                    transition { $0.writeSucceeded(row, sequence: number, isWriteResult: false) }
                } catch {
                    transition { $0.writeCommitted() }
                    report(.refreshFailed(table: table.shownName, error))
                    Task { await reread() }
                }
            case .conflict:
                let number = await sequence.nextRead()
                do {
                    let row = try await table.read([id]).first?.committed
                    transition { $0.writeConflicted(theirs: row, sequence: number) }
                } catch {
                    let failure = error as? PostgresError ?? PostgresError(.server, "\(error)")
                    transition { $0.writeFailed(.writeFailed(table: table.shownName, key: keyText, failure)) }
                }
            }
        }
    }

    private func nextWrite() -> SyncState<Content>.Write? {
        var write: SyncState<Content>.Write?
        transition { sync in
            let (next, effects) = sync.nextWrite(readsStarted: sequence.current)
            write = next
            return effects
        }
        return write
    }
}
