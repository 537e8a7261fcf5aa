#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import Logging
import UserNotifications

#if canImport(UIKit)
import UIKit
#endif

/// What the app delegate hands HeraldKit about APNs: the device token, and the silent
/// notifications (recalls, categories sent ahead). Notifications with an alert are iOS's to
/// show, and ``HeraldNotificationDelegate``'s in the foreground.
public struct RemoteNotifications: Sendable {
    public let api: HeraldAPIClient
    public let credentials: any CredentialStore
    public let arrivals: Arrivals
    /// `sandbox` for a development build (the `aps-environment` entitlement), nil for production.
    public let apnsEnvironment: String?

    public init(api: HeraldAPIClient, credentials: any CredentialStore, arrivals: Arrivals, apnsEnvironment: String? = nil) {
        self.api = api
        self.credentials = credentials
        self.arrivals = arrivals
        self.apnsEnvironment = apnsEnvironment
    }

    /// From `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`: sends the
    /// token to Herald, registering the device first if it holds no credentials yet.
    public func didRegister(deviceToken: Data) async throws {
        let held: DeviceCredentials
        if let stored = try await credentials.load() {
            held = stored
        } else {
            held = try await api.register(platform: "ios", apnsEnvironment: apnsEnvironment)
            try await credentials.save(held)
        }
        try await api.setAPNsToken(deviceToken, environment: apnsEnvironment, credentials: held)
    }

    /// Carries out a silent notification; one with an alert is left to iOS (posting it here
    /// too would show it twice). Whether something was done.
    func carryOutSilent(_ userInfo: [AnyHashable: Any]) async -> Bool {
        guard !HeraldEvent.fromAPNs(userInfo: userInfo).contains(where: { $0.shownNotification != nil }) else { return false }
        return !(await arrivals.receive(apns: userInfo)).isEmpty
    }

    #if canImport(UIKit)
    /// From `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    @MainActor
    public func didReceiveRemoteNotification(
        _ userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        let userInfo = APNsUserInfo(value: userInfo)
        Task { @MainActor in
            completionHandler(await carryOutSilent(userInfo.value) ? .newData : .noData)
        }
    }

    /// Asks the user's permission to show notifications, and registers with APNs (which
    /// silent notifications need even without it). Returns whether permission was given.
    @MainActor
    public static func requestAuthorization(
        options: UNAuthorizationOptions = [.alert, .badge, .sound],
        registering application: UIApplication
    ) async throws -> Bool {
        let granted = try await UNUserNotificationCenter.current().requestAuthorization(options: options)
        application.registerForRemoteNotifications()
        return granted
    }
    #endif
}
#endif
