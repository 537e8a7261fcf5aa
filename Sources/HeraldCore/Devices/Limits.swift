/// The limits operators know from JPush and Airship.
public enum Limits {
    /// Bytes in a tag or an alias.
    public static let maxTagOrAliasBytes = 40
    /// Tags added or removed in one request.
    public static let maxTagsPerChange = 100
    /// Tags on one device.
    public static let maxTagsPerDevice = 1000
    /// Registration ids in one bulk call.
    public static let maxIDsPerBulkCall = 1000
    /// Devices that may share one alias.
    public static let maxDevicesPerAlias = 10
    /// Bytes in an app name.
    public static let maxAppNameBytes = 100
}
