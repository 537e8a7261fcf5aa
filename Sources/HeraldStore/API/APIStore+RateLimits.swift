import Foundation
import HeraldCore
import PostgresNIO

/// What a node took from an app's shared token bucket.
public struct RateTokens: Sendable, Hashable {
    /// Whole tokens the node may spend.
    public var granted: Int
    /// What the bucket holds after the take (a fraction of a token counts toward the next).
    public var remaining: Double

    public init(granted: Int, remaining: Double) {
        self.granted = granted
        self.remaining = remaining
    }
}

extension APIStore {
    /// Takes up to `want` tokens from the app's bucket (a bucket of `perMinute` tokens that
    /// refills at `perMinute` a minute, shared by every node), after adding back `returned`
    /// tokens this node took before and did not spend (`herald_take_rate_tokens`,
    /// migration 0019).
    public func takeRateTokens(appID: Int64, perMinute: Int, want: Int, returned: Int = 0) async throws -> RateTokens {
        let rows = try await client.query(
            """
            SELECT granted, remaining FROM herald_take_rate_tokens(
                \(appID), \(Int32(clamping: perMinute)), \(Int32(clamping: want)), \(Int32(clamping: returned)))
            """,
            logger: logger
        )
        for try await (granted, remaining) in rows.decode((Int32, Double).self) {
            return RateTokens(granted: Int(granted), remaining: remaining)
        }
        throw HeraldError(.internalError, "herald_take_rate_tokens answered no row")
    }
}
