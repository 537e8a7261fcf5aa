#if canImport(UserNotifications) && !os(tvOS) && !os(watchOS)
import Foundation
import HeraldKit
import UserNotifications

/// `UNNotificationCategory`s made from Herald's categories: their options, actions and
/// action options are iOS's raw values, handed over as they are.
enum NotificationCategories {
    static func category(_ config: NotificationConfig) -> UNNotificationCategory {
        UNNotificationCategory(
            identifier: config.identifier,
            actions: config.actions.map(action),
            intentIdentifiers: config.intentIdentifiers ?? [],
            options: UNNotificationCategoryOptions(rawValue: config.options)
        )
    }

    static func action(_ action: NotificationConfig.Action) -> UNNotificationAction {
        let options = UNNotificationActionOptions(rawValue: action.options)
        guard action.isTextInput else {
            return UNNotificationAction(identifier: action.identifier, title: action.title, options: options)
        }
        return UNTextInputNotificationAction(
            identifier: action.identifier,
            title: action.title,
            options: options,
            textInputButtonTitle: action.textInputButtonTitle ?? action.title,
            textInputPlaceholder: action.textInputPlaceholder ?? ""
        )
    }

    /// Registers `configs` beside every category already registered (the app's own, and
    /// Herald's), a newer definition replacing the one under its identifier.
    static func register(_ configs: [NotificationConfig]) async {
        guard !configs.isEmpty else { return }
        let center = UNUserNotificationCenter.current()
        var byIdentifier: [String: UNNotificationCategory] = [:]
        for category in await center.notificationCategories() {
            byIdentifier[category.identifier] = category
        }
        for config in configs {
            byIdentifier[config.identifier] = category(config)
        }
        center.setNotificationCategories(Set(byIdentifier.values))
    }
}

extension UserNotificationPresenter {
    /// At launch: registers the app's own categories and the Herald categories kept across
    /// launches (`push_extension…`, ``CategoryStore``). Herald's other categories lasted
    /// the launch that registered them, so they are left out.
    public static func registerCategories(_ appCategories: Set<UNNotificationCategory>, keeping store: CategoryStore?) {
        let kept = (store?.load().values).map { $0.map(NotificationCategories.category) } ?? []
        UNUserNotificationCenter.current().setNotificationCategories(appCategories.union(kept))
    }
}
#endif
