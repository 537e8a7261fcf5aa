/// A condition a test waited for that did not come true in time.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// Polls `condition` every 10 ms until it holds; throws once `timeout` has passed, so a
/// test whose condition never comes fails instead of holding its slot forever.
public func waitUntil(
    _ what: @autoclosure () -> String,
    timeout: Duration = .seconds(10),
    _ condition: () throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimedOut(description: "waited \(timeout) for \(what())") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
