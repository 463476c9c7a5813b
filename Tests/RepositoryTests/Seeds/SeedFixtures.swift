import Dispatch

/// Returns once every block `queue` held when this was called has run: a FIFO queue's
/// barrier, so a test waits for delivery without sleeping.
func drain(_ queue: DispatchQueue) async {
    await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
}
