extension Database {
    /// The executor of the thread that waits for every connection's answers.
    ///
    /// A statement's answer normally resumes the awaiting task on Swift's cooperative pool: one
    /// wake-up of another thread per statement. Code that prefers this executor goes on right
    /// where the answer arrived instead:
    ///
    /// ```swift
    /// let person = try await withTaskExecutorPreference(database.executor) {
    ///     try await book.readPerson(id: 42)
    /// }
    /// ```
    ///
    /// It then runs on that one thread, shared by every connection of the process: it must not
    /// block (no blocking calls, no long computations), or every statement's answer waits.
    /// Child tasks inherit the preference.
    public var executor: any TaskExecutor { SocketPoller.shared }
}
