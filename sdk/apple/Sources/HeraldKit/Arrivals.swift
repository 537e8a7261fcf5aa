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
    /// Sets the app icon's badge (0 clears it).
    func setBadge(_ count: Int) async
}

/// Carries out what arrives, whichever way it came (the long connection, an APNs
/// notification in the app or in its extension):
/// - a message is shown once, whichever copy comes first (``DeliveryLedger``);
/// - a recall removes exactly the identifiers it names, pending and delivered;
/// - a replace re-posts under the same identifier;
/// - categories are registered, and the persistent ones (`push_extension…`) kept
///   (``CategoryStore``);
/// - an in-app message goes to the app;
/// - what is shown gets a `displayed` receipt, and what can't be read a `dropped` one with
///   the reason (``ReceiptQueue``).
public struct Arrivals: Sendable {
    public let ledger: any LedgerStore
    /// Nil: nothing is shown by the SDK (the app reads ``HeraldClient/events`` itself).
    public let presenter: (any Presenter)?
    public let categories: CategoryStore?
    public let receipts: ReceiptQueue?
    let logger: Logger

    public init(
        ledger: any LedgerStore,
        presenter: (any Presenter)?,
        categories: CategoryStore? = nil,
        receipts: ReceiptQueue? = nil,
        logger: Logger
    ) {
        self.ledger = ledger
        self.presenter = presenter
        self.categories = categories
        self.receipts = receipts
        self.logger = logger
    }

    /// Carries out a payload from the long connection (``ParsedPayload``). Returns the
    /// events carried out.
    @discardableResult
    public func receive(connectionPayload bytes: some Collection<UInt8>, language: String? = nil) async -> [HeraldEvent] {
        let parsed = ParsedPayload(bytes, language: language)
        if let reason = parsed.dropped { drop(parsed.messageID, reason, channel: .connection) }
        return await handle(parsed.events, via: .connection)
    }

    /// Carries out an APNs notification's `userInfo` (``HeraldEvent/fromAPNs(userInfo:dropped:)``),
    /// in the app. Returns the events carried out.
    @discardableResult
    public func receive(apns userInfo: [AnyHashable: Any]) async -> [HeraldEvent] {
        var reasons: [String] = []
        let events = HeraldEvent.fromAPNs(userInfo: userInfo) { reasons.append($0) }
        if let reason = reasons.first {
            drop(((userInfo["herald"] as? [String: Any])?["msg_id"] as? String), reason, channel: .apns)
        }
        return await handle(events, via: .apns)
    }

    /// Carries out `events`, which arrived by `channel`. Returns those carried out: a copy
    /// of a message already carried out is left out.
    @discardableResult
    public func handle(_ events: [HeraldEvent], via channel: DeliveryLedger.Channel) async -> [HeraldEvent] {
        var done: [HeraldEvent] = []
        // A message's notification and in-app message arrive together: one arrival.
        var decided: [String: Bool] = [:]
        func first(_ msgID: String) -> Bool {
            if let known = decided[msgID] { return known }
            let first = self.first(msgID, channel)
            decided[msgID] = first
            return first
        }
        for event in events {
            switch event {
            case .notification(let notification), .replace(_, let notification):
                guard first(notification.messageID) else { continue }
                await register(notification.config)
                if let presenter {
                    await presenter.show(notification, replacing: event.isReplace)
                    record(Receipt(msgID: notification.messageID, kind: .displayed))
                }
            case .recall(let identifiers):
                // Idempotent: removing twice removes nothing more.
                await presenter?.remove(identifiers: identifiers)
            case .message(let message):
                guard first(message.messageID) else { continue }
                await presenter?.deliver(message)
            case .categoryConfig(let config):
                await register(config)
            case .connected, .disconnected, .stopped:
                break
            }
            done.append(event)
        }
        return done
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

    private func drop(_ msgID: String?, _ reason: String, channel: DeliveryLedger.Channel) {
        logger.warning(
            "dropped what arrived",
            metadata: ["herald.msg_id": "\(msgID ?? "-")", "herald.channel": "\(channel.rawValue)", "reason": "\(reason)"]
        )
        if let msgID, !msgID.isEmpty { record(Receipt(msgID: msgID, kind: .dropped, reason: reason)) }
    }

    private func record(_ receipt: Receipt) {
        do {
            try receipts?.add(receipt)
        } catch {
            logger.warning("cannot queue a receipt", metadata: ["herald.msg_id": "\(receipt.msgID)", "error": "\(error)"])
        }
    }

    private func register(_ config: NotificationConfig?) async {
        guard let config else { return }
        do {
            try categories?.save(config)
        } catch {
            logger.warning("cannot keep a category", metadata: ["herald.category": "\(config.identifier)", "error": "\(error)"])
        }
        await presenter?.register([config])
    }
}

extension HeraldEvent {
    var isReplace: Bool {
        if case .replace = self { return true }
        return false
    }
}
