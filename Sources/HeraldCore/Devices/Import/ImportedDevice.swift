/// One device of an import file (``DeviceImportReader``), validated: what the store
/// upserts by registration id.
public struct ImportedDevice: Sendable, Hashable {
    /// The line of the file the row came from (1 is the first line; a CSV header is line 1).
    public var line: Int
    public var registrationID: String
    public var platform: Platform
    public var apnsToken: String?
    /// Set whenever `apnsToken` is (production when the row didn't say).
    public var apnsEnvironment: APNsEnvironment?
    public var voipToken: String?
    public var alias: String?
    /// Deduplicated, in the row's order; at most ``Limits/maxTagsPerDevice``.
    public var tags: [String]
    public var mobile: String?

    public init(
        line: Int,
        registrationID: String,
        platform: Platform,
        apnsToken: String? = nil,
        apnsEnvironment: APNsEnvironment? = nil,
        voipToken: String? = nil,
        alias: String? = nil,
        tags: [String] = [],
        mobile: String? = nil
    ) {
        self.line = line
        self.registrationID = registrationID
        self.platform = platform
        self.apnsToken = apnsToken
        self.apnsEnvironment = apnsToken == nil ? nil : (apnsEnvironment ?? .production)
        self.voipToken = voipToken
        self.alias = alias
        self.tags = tags
        self.mobile = mobile
    }
}

/// A row of an import file that was not imported, and why.
public struct RejectedImportRow: Error, Sendable, Hashable {
    public var line: Int
    /// The row's registration id, when it had one that could be read.
    public var registrationID: String?
    public var reason: String

    public init(line: Int, registrationID: String?, reason: String) {
        self.line = line
        self.registrationID = registrationID
        self.reason = reason
    }
}
