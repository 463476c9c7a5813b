public import ArgumentParser
public import Repository

extension MigrationVersion: ExpressibleByArgument {
    /// `42`, `20240229134506`, or a dotted Flyway version such as `2.1`.
    public init?(argument: String) {
        self.init(argument)
    }
}
