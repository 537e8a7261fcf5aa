extension PushRequest {
    /// The category `notification.ios.category` names: an operator-defined one when the app
    /// has it, else only APNs' `category` field.
    public var namedCategory: String? { notification?.ios?.category }

    /// Refuses `notification.ios.notification_config` in a request: Herald sets it from the
    /// category the push names.
    public func checkNoCategoryConfig() throws(HeraldError) {
        if notification?.ios?.notificationConfig != nil {
            throw HeraldError(
                .unsupportedKey,
                "notification.ios.notification_config: set by Herald from the category notification.ios.category names; define categories with /v3/categories"
            )
        }
    }

    /// This request carrying a category's configuration (``NotificationCategory/config(version:)``).
    public func carrying(categoryConfig config: JSONValue) -> PushRequest {
        var request = self
        request.notification?.ios?.notificationConfig = config
        return request
    }

    /// The silent push that sends a category's configuration ahead to an audience
    /// (`POST /v3/categories/{id}/deliver`): devices without a Notification Service
    /// Extension register it before a push uses it.
    public static func categoryDelivery(audience: PushAudience, platform: PushPlatforms?, config: JSONValue, timeToLive: Int?) -> PushRequest {
        var ios = IOSNotification(contentAvailable: true)
        ios.notificationConfig = config
        return PushRequest(
            platform: platform,
            audience: audience,
            notification: PushNotification(ios: ios),
            options: PushOptions(timeToLive: timeToLive)
        )
    }
}
