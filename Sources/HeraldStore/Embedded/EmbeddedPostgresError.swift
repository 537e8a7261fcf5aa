/// The embedded PostgreSQL cluster could not be set up, started or stopped.
public struct EmbeddedPostgresError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
