import Foundation
import HeraldCore

/// An app as the store holds it (without its secrets).
public struct AppRecord: Sendable, Hashable {
    /// Internal row id: never leaves the server.
    public var id: Int64
    public var appKey: String
    public var name: String
    public var createdAt: Date
    /// What operators may see of the APNs credentials, if any are set.
    public var apns: APNsCredentialsSummary?
    public var apnsUpdatedAt: Date?
    /// APNs refused the credentials with this reason: nothing goes to APNs for the app
    /// until new credentials are uploaded.
    public var apnsProblem: String?
    /// The app's own limit of push requests per minute (0: none); nil follows the node's
    /// default.
    public var rateLimitPerMinute: Int?
    /// Quiet hours and a daily cap on operations pushes.
    public var controls = DeliveryControls()
    /// The zone of its schedules' times and of devices that reported none.
    public var timeZone = "UTC"
}

/// A newly created app, with its master secret: the only time the secret exists in clear.
public struct CreatedApp: Sendable {
    public var app: AppRecord
    public var masterSecret: String
}
