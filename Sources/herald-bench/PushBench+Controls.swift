import Foundation
import HeraldStore

/// The delivery controls' cost (`--phases controls`): flat-out unicast with the app plain,
/// with a rate limit it never reaches (every request goes through the shared bucket), and
/// with callbacks (every event recorded and POSTed to a local webhook receiver), in turns,
/// twice, in one run; and how many callback events a second the receiver got.
extension PushBench {
    enum ControlVariant: String, CaseIterable, Sendable {
        case plain = "off"
        case rateLimited = "rate limit"
        case callbacks = "callbacks"
    }

    struct ControlRun: Sendable {
        var variant: ControlVariant
        var round: Int
        var result: UnicastResult
        /// What the receiver got, for the callbacks variant.
        var webhook: WebhookReceiver.Tally?
    }

    func controls() async throws -> [ControlRun] {
        let receiver = try await WebhookReceiver.start()
        defer { receiver.stop() }
        var runs: [ControlRun] = []
        var webhookID: Int64?
        for round in 1...2 {
            for variant in ControlVariant.allCases {
                webhookID = try await apply(variant, receiver: receiver, webhook: webhookID)
                // Nodes see a changed limit within their credential cache's 5 s, and the event
                // setting within 2 s.
                try await Task.sleep(for: .seconds(6))
                receiver.reset()
                let result = try await unicastForControls()
                var tally: WebhookReceiver.Tally?
                if variant == .callbacks { tally = try await receiver.settle(quiet: .seconds(3), timeout: options.drainTimeout) }
                say(
                    "  \(variant.rawValue), round \(round): \(Stats.format(result.acceptedPerSecond, 0)) accepted/s, "
                        + "\(Stats.format(result.deliveredPerSecond, 0)) delivered/s"
                        + (tally.map { "; webhook: \($0.events) events in \($0.requests) requests, \(Stats.format($0.perSecond, 0))/s" } ?? "")
                )
                runs.append(ControlRun(variant: variant, round: round, result: result, webhook: tally))
            }
        }
        _ = try await apply(.plain, receiver: receiver, webhook: webhookID)
        return runs
    }

    /// Sets the app up for `variant`; returns the webhook it has then, if any.
    private func apply(_ variant: ControlVariant, receiver: WebhookReceiver, webhook: Int64?) async throws -> Int64? {
        let store = herald.store
        let limit: Int? = variant == .rateLimited ? 1_000_000_000 : nil
        _ = try await store.updateApp(appKey: app.appKey, AppSettingsChange(rateLimitPerMinute: .some(limit)))
        switch variant {
        case .callbacks:
            _ = try await store.setEventsEnabled(appKey: app.appKey, true)
            if let webhook { return webhook }
            let created = try await store.eventLog.createWebhook(appKey: app.appKey, url: "http://127.0.0.1:\(receiver.port)/hook", types: [])
            guard case .created(let webhook, _) = created else { return nil }
            return webhook.id
        case .plain, .rateLimited:
            _ = try await store.setEventsEnabled(appKey: app.appKey, false)
            if let webhook { _ = try await store.eventLog.deleteWebhook(appKey: app.appKey, id: webhook) }
            return nil
        }
    }
}

extension PushResults {
    /// The controls phase: each variant's medians over its rounds, against the plain one.
    func printControls() {
        guard !controls.isEmpty else { return }
        say("(d) Delivery controls, flat out over \(options.httpConnections) connections for \(options.flatOutDuration) each, alternating:")
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let plain = median(controls.filter { $0.variant == .plain }.map(\.result.acceptedPerSecond))
        for variant in PushBench.ControlVariant.allCases {
            let runs = controls.filter { $0.variant == variant }
            guard !runs.isEmpty else { continue }
            let accepted = runs.map(\.result.acceptedPerSecond)
            let rounds = accepted.map { Stats.format($0, 0) }.joined(separator: ", ")
            say(
                "    \(variant.rawValue): \(rounds) accepted pushes/s (median \(Stats.format(median(accepted), 0)), "
                    + "\(Stats.format(median(accepted) / max(plain, 1), 2))× off); delivered \(runs.map { Stats.format($0.result.deliveredPerSecond, 0) }.joined(separator: ", "))/s"
            )
            let tallies = runs.compactMap(\.webhook)
            if !tallies.isEmpty {
                say(
                    "      callback deliveries to the local receiver: \(tallies.map { "\($0.events) events in \($0.requests) requests, \(Stats.format($0.perSecond, 0))/s" }.joined(separator: "; "))"
                )
            }
        }
    }
}
