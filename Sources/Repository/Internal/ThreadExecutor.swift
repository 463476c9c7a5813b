import Foundation

/// A serial executor that runs every job on one dedicated OS thread.
///
/// libpq calls block, and blocking Swift's cooperative pool starves every other task, so each
/// ``Connection`` actor runs on one of these: its methods may call libpq directly.
final class ThreadExecutor: SerialExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var stopping = false
    }

    private let queue = Locked(Queue())
    private let wakeUp = DispatchSemaphore(value: 0)

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets the thread finish the jobs already queued, then exit.
    func shutdown() {
        queue.withLock { $0.stopping = true }
        wakeUp.signal()
    }

    private func run() {
        var batch: [UnownedJob] = []
        while true {
            wakeUp.wait()
            let stopping = queue.withLock { queue in
                swap(&batch, &queue.jobs)
                return queue.stopping
            }
            for job in batch {
                job.runSynchronously(on: asUnownedSerialExecutor())
            }
            batch.removeAll(keepingCapacity: true)
            if stopping, queue.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
