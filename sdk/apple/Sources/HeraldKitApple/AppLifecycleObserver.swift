#if canImport(UserNotifications) && canImport(UIKit) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import UIKit

/// Tells a ``HeraldClient`` when the app comes to the foreground or goes to the background
/// (UIApplication's notifications): the connection is held in the foreground only.
public final class AppLifecycleObserver {
    private let observers: [any NSObjectProtocol]

    /// Starts with the application's current state; keep the observer as long as the client.
    @MainActor
    public init(client: HeraldClient, application: UIApplication) {
        client.setAppState(application.applicationState == .background ? .background : .foreground)
        let center = NotificationCenter.default
        observers = [
            center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: nil) { _ in
                client.setAppState(.foreground)
            },
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: nil) { _ in
                client.setAppState(.background)
            },
        ]
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }
}
#endif
