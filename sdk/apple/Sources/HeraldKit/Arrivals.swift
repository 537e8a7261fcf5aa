import Logging

/// What the app's notification system is asked to do: on iOS `UNUserNotificationCenter`
/// (HeraldKit's Apple glue), in tests a recorder. Every decision is made before it gets
/// here (``Arrivals``), so what would be shown, removed or registered is checked on Linux.
public protocol Presenter: Sendable {
    /// Shows `notification` under its identifier; a notification already shown or pending
    /// under that identifier is replaced by it (`replacing`: a replace push).
    func show(_ notification: HeraldEvent.Notification, replacing: Bool) async
    /// Removes the notifications with these identifiers, delivered and pending.
    func remove(identifiers: [String]) async
    /// Registers categories (the app's own kept beside them).
    func register(_ categories: [NotificationConfig]) async
    /// Hands an in-app message to the app (never shown by the system).
    func deliver(_ message: HeraldEvent.Message) async
}

/// Carries out what arrives, whichever way it came (the long connection, an APNs
/// notification in the app or in its extension):
/// - a message is shown once, whichever copy comes first (``DeliveryLedger``);
/// - a recall removes exactly the identifiers it names, pending and delivered;
/// - a replace re-posts under the same identifier;
/// - categories are registered, and the persistent ones (`push_extension…`) kept
///   (``CategoryStore``);
/// - an in-app message goes to the app.
public struct Arrivals: Sendable {
    public let ledger: any LedgerStore
    public let presenter: any Presenter
    public let categories: CategoryStore?
    let logger: Logger

    public init(ledger: any LedgerStore, presenter: any Presenter, categories: CategoryStore? = nil, logger: Logger) {
        self.ledger = ledger
        self.presenter = presenter
        self.categories = categories
        self.logger = logger
    }

    /// Carries out `events`, which arrived by `channel`. Returns the notifications shown.
    @discardableResult
    public func handle(_ events: [HeraldEvent], via channel: DeliveryLedger.Channel) async -> [HeraldEvent.Notification] {
        var shown: [HeraldEvent.Notification] = []
        for event in events {
            switch event {
            case .notification(let notification):
                guard first(notification.messageID, channel) else { continue }
                await register(notification.config)
                await presenter.show(notification, replacing: false)
                shown.append(notification)
            case .replace(_, let notification):
                guard first(notification.messageID, channel) else { continue }
                await register(notification.config)
                await presenter.show(notification, replacing: true)
                shown.append(notification)
            case .recall(let identifiers):
                // Idempotent: removing twice removes nothing more.
                await presenter.remove(identifiers: identifiers)
            case .message(let message):
                guard first(message.messageID, channel) else { continue }
                await presenter.deliver(message)
            case .categoryConfig(let config):
                await register(config)
            case .connected, .disconnected, .stopped:
                break
            }
        }
        return shown
    }

    /// Whether `msgID` arrives for the first time; a ledger that can't be read or written
    /// lets it through (better twice than never).
    private func first(_ msgID: String, _ channel: DeliveryLedger.Channel) -> Bool {
        do {
            return try ledger.arrived(msgID, via: channel)
        } catch {
            logger.warning("cannot record an arrival; showing it", metadata: ["error": "\(error)"])
            return true
        }
    }

    private func register(_ config: NotificationConfig?) async {
        guard let config else { return }
        do {
            try categories?.save(config)
        } catch {
            logger.warning("cannot keep a category", metadata: ["herald.category": "\(config.identifier)", "error": "\(error)"])
        }
        await presenter.register([config])
    }
}
