#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import Logging
import UserNotifications

/// The `UNUserNotificationCenter` delegate for Herald's notifications. Set it as the
/// center's delegate (and keep it: the center holds it weakly), or call its two methods
/// from your own delegate.
///
/// - In the foreground, an APNs notification is carried out through ``Arrivals`` (its
///   categories registered, recalls done, a `displayed` receipt queued) and iOS shows it,
///   unless the same message was already shown from the connection. The SDK's own local
///   notifications (a copy from the connection) and the app's are shown.
/// - A response (a tap, an action with its text, a dismissal) goes through
///   ``Interactions`` to an ``Opening``, which `open` receives on the main actor; a
///   response to a notification that isn't Herald's is left alone.
public final class HeraldNotificationDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    let arrivals: Arrivals
    let interactions: Interactions
    let presentation: UNNotificationPresentationOptions
    let open: @MainActor @Sendable (Opening) -> Void

    /// - Parameters:
    ///   - arrivals: the app's; its presenter does everything but post the APNs copy iOS
    ///     is about to show.
    ///   - presentation: how a notification shows in the foreground.
    public init(
        arrivals: Arrivals,
        interactions: Interactions,
        presentation: UNNotificationPresentationOptions = [.banner, .list, .sound, .badge],
        logger: Logger,
        open: @escaping @MainActor @Sendable (Opening) -> Void
    ) {
        self.arrivals = Arrivals(
            ledger: arrivals.ledger,
            presenter: arrivals.presenter.map(ShownBySystem.init),
            categories: arrivals.categories,
            receipts: arrivals.receipts,
            logger: logger
        )
        self.interactions = interactions
        self.presentation = presentation
        self.open = open
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping @Sendable (UNNotificationPresentationOptions) -> Void
    ) {
        guard notification.request.trigger is UNPushNotificationTrigger else {
            completionHandler(presentation)
            return
        }
        let userInfo = APNsUserInfo(value: notification.request.content.userInfo)
        Task { completionHandler(await self.presentation(ofRemote: userInfo.value)) }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter,
        didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping @Sendable () -> Void
    ) {
        let text = (response as? UNTextInputNotificationResponse)?.userText
        let opening = interactions.respond(
            Response(actionIdentifier: response.actionIdentifier, text: text),
            userInfo: response.notification.request.content.userInfo
        )
        guard let opening else {
            completionHandler()
            return
        }
        let open = self.open
        Task { @MainActor in
            open(opening)
            completionHandler()
        }
    }

    /// How an APNs notification shows in the foreground: as iOS would, unless it is a copy
    /// of a message already shown from the connection.
    func presentation(ofRemote userInfo: [AnyHashable: Any]) async -> UNNotificationPresentationOptions {
        let carriedOut = await arrivals.receive(apns: userInfo)
        if carriedOut.contains(where: { $0.shownNotification != nil }) { return presentation }
        guard let notification = HeraldEvent.fromAPNs(userInfo: userInfo).lazy.compactMap(\.shownNotification).first else {
            return presentation  // not Herald's
        }
        // Seen before: by the service extension (this very copy), or over the connection.
        let firstCame = try? arrivals.ledger.update { $0.channel(of: notification.messageID) }
        return firstCame == .connection ? [] : presentation
    }
}

/// The app's presenter, but for the APNs notification iOS shows itself in the foreground.
struct ShownBySystem: Presenter {
    let base: any Presenter

    func show(_ notification: HeraldEvent.Notification, replacing: Bool) async {}
    func remove(identifiers: [String]) async { await base.remove(identifiers: identifiers) }
    func register(_ categories: [NotificationConfig]) async { await base.register(categories) }
    func deliver(_ message: HeraldEvent.Message) async { await base.deliver(message) }
    func setBadge(_ count: Int) async { await base.setBadge(count) }
}
#endif
