import Foundation
import HeraldCore
import HeraldStore
import Logging
import NIOConcurrencyHelpers

/// What the SMS fallback needs from the store: the outbox of migration 0023
/// (``HeraldStore/SMSOutboxStore`` is it).
public protocol SMSOutbox: Sendable {
    /// Seals a batch of numbers still in clear; how many.
    func sealClearMobiles(limit: Int) async throws -> Int
    /// Puts the SMS of messages whose delay ran out into the outbox; how many.
    func planDueSMS(limit: Int) async throws -> Int
    func claimSMS(limit: Int, perApp: Int, inFlight: [Int64: Int], lease: Duration) async throws -> [ClaimedSMS]
    func smsProviders(appIDs: [Int64]) async throws -> [Int64: SMSHTTPProviderConfiguration]
    func finishSMS(_ updates: [SMSUpdate]) async throws
}

extension SMSOutboxStore: SMSOutbox {}

/// How a node sends the SMS of `sms_message`.
public struct SMSConfiguration: Sendable {
    /// Where the SMS of apps without a provider of their own go; nil: nowhere (each is
    /// recorded failed, `NoSMSProvider`). `herald serve` and the tests use an ``SMSSandbox``.
    public var provider: (any SMSProvider)?
    /// Attempts per SMS before it is recorded failed.
    public var maxAttempts: Int = 3
    /// The wait before an SMS's next attempt, doubled per attempt.
    public var retryDelay: Duration = .seconds(30)
    /// How long a node holds a claimed SMS: one claimed by a node that died is claimed
    /// again after it.
    public var lease: Duration = .seconds(60)

    public init(provider: (any SMSProvider)? = nil) {
        self.provider = provider
    }
}

/// Sends the SMS of `sms_message` (migration 0023's outbox): every poll it plans the
/// messages whose delay has run out (``CenterStore/planDueSMS(limit:)``), claims the SMS
/// due under a lease and sends each through the provider, unless its message was recalled
/// or replaced (cancelled) or its copy reached the device meanwhile (skipped). Each node
/// runs one; the claim's `SKIP LOCKED` keeps them apart, and one SMS claimed by a node that
/// died is claimed again when its lease runs out, with the same idempotency key.
///
/// Each SMS is sent in a task of its own (at most ``width`` at once) and its outcome
/// recorded as soon as it comes: an SMS the provider took is not sent again after a crash
/// because a slower one of its batch was still out. One app has at most ``perApp`` in
/// flight, so a hung provider holds only its own app's SMS, whatever its backlog.
public struct SMSSender: Sendable {
    let store: any SMSOutbox
    let configuration: SMSConfiguration
    /// How often the outbox is looked at.
    let pollInterval: Duration
    /// Apps' own providers are asked through it (addresses checked, no redirect).
    let outbound: any OutboundPosting
    let logger: Logger
    /// SMS in flight per app.
    private let inFlight = NIOLockedValueBox<[Int64: Int]>([:])

    /// SMS in flight at most.
    static let width = 64
    /// SMS of one app in flight at most: a quarter of the sender.
    static let perApp = 16

    public init(
        store: any SMSOutbox,
        configuration: SMSConfiguration,
        pollInterval: Duration,
        outbound: any OutboundPosting,
        logger: Logger
    ) {
        self.store = store
        self.configuration = configuration
        self.pollInterval = pollInterval
        self.outbound = outbound
        self.logger = logger
    }

    /// A claimed SMS with its app's HTTP provider, if it has one.
    struct Claimed: Sendable {
        var sms: ClaimedSMS
        var provider: SMSHTTPProviderConfiguration?
    }

    public func run() async {
        let loop = ClaimLoop<Claimed>(
            width: Self.width,
            refill: Self.width / 4,
            pollInterval: pollInterval,
            claim: { limit in try await self.claim(limit: limit) },
            work: { claimed in await self.send(claimed) },
            failed: { [logger] error in logger.warning("SMS fallback failed; trying again", metadata: ["error": "\(error)"]) }
        )
        await loop.run()
    }

    /// Plans the messages due, then claims up to `limit` SMS with their providers.
    private func claim(limit: Int) async throws -> [Claimed] {
        // Numbers still in clear (from before migration 0023, or an import) are sealed
        // first, a batch per round, from the node's start on.
        _ = try await store.sealClearMobiles(limit: 500)
        _ = try await store.planDueSMS(limit: 100)
        let busy = inFlight.withLockedValue { $0 }
        let claimed = try await store.claimSMS(limit: limit, perApp: Self.perApp, inFlight: busy, lease: configuration.lease)
        let providers = try await store.smsProviders(appIDs: Array(Set(claimed.map(\.appID))))
        return claimed.map { Claimed(sms: $0, provider: providers[$0.appID]) }
    }

    /// Sends one SMS and records what became of it.
    private func send(_ claimed: Claimed) async {
        // Counted while it is sent (not from its claim, which may be abandoned: a count
        // that is never given back would shrink its app's share for good).
        inFlight.withLockedValue { $0[claimed.sms.appID, default: 0] += 1 }
        defer {
            inFlight.withLockedValue { counts in
                let left = (counts[claimed.sms.appID] ?? 1) - 1
                counts[claimed.sms.appID] = left > 0 ? left : nil
            }
        }
        let provider: (any SMSProvider)? =
            claimed.provider.map { HTTPSMSProvider(configuration: $0, client: outbound) } ?? configuration.provider
        let update = await send(claimed.sms, provider: provider)
        // Shutting down: a request cut short is not a failure; the SMS is claimed again
        // when its lease runs out, with the same idempotency key.
        if Task.isCancelled, update.state != .sent { return }
        do {
            try await store.finishSMS([update])
        } catch {
            // Claimed again when its lease runs out, with the same idempotency key.
            if !Task.isCancelled { logger.warning("cannot record an SMS outcome", metadata: ["error": "\(error)"]) }
        }
    }

    private func send(_ sms: ClaimedSMS, provider: (any SMSProvider)?) async -> SMSUpdate {
        func update(_ state: SMSUpdate.State, _ error: String? = nil, retryAt: Date? = nil) -> SMSUpdate {
            SMSUpdate(messageID: sms.messageID, deviceID: sms.deviceID, state: state, error: error, retryAt: retryAt)
        }
        if sms.isWithdrawn { return update(.cancelled) }
        if sms.isDelivered { return update(.skipped, "Delivered") }
        guard let mobile = sms.mobile else { return update(.skipped, "NoMobile") }
        guard let fallback = sms.fallback else { return update(.failed, "NoSMSMessage") }
        guard let provider else { return update(.failed, "NoSMSProvider") }
        let request = SMSRequest(
            appID: sms.appID,
            mobile: mobile,
            content: fallback.content,
            templateID: fallback.templateID,
            params: fallback.params,
            signID: fallback.signID,
            idempotencyKey: sms.idempotencyKey,
            msgID: sms.msgID
        )
        switch await provider.send(request) {
        case .sent:
            return update(.sent)
        case .rejected(let reason):
            logger.warning(
                "SMS refused",
                metadata: ["herald.msg_id": "\(sms.msgID)", "herald.mobile": "\(request.maskedMobile)", "reason": "\(reason)"]
            )
            return update(.failed, reason)
        case .retryLater(let reason):
            guard sms.attempt < configuration.maxAttempts else { return update(.failed, reason) }
            let delay = configuration.retryDelay * (1 << min(sms.attempt - 1, 10))
            return update(.pending, reason, retryAt: Date().addingTimeInterval(delay.timeInterval))
        }
    }
}
