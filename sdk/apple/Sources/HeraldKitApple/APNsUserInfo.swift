#if canImport(UserNotifications)
import HeraldKit

/// A notification's `userInfo`: a property list from APNs (or the one the SDK posted for a
/// copy from the connection), never changed once it arrived, so it may cross to another
/// task; Swift can't prove that of `[AnyHashable: Any]`.
struct APNsUserInfo: @unchecked Sendable {
    let value: [AnyHashable: Any]
}

extension HeraldEvent {
    /// The notification this event shows, if it shows one.
    var shownNotification: Notification? {
        if case .notification(let notification) = self { return notification }
        return nil
    }
}
#endif
