import Foundation
import HeraldCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK

extension APNsClient {
    /// Sends one notification and returns what to do about it.
    ///
    /// Waits for a free stream when every connection is busy (backpressure). Transient
    /// failures (5xx, IdleTimeout, an expired provider token, a stream refused by GOAWAY,
    /// a connection lost before the answer) are retried on another connection, within the
    /// request deadline. A stream lost with its connection may have reached APNs, so a
    /// retry can deliver twice; a stream above a GOAWAY's last stream id cannot.
    ///
    /// 5xx answers in a row open the client's circuit (``APNsCircuitBreaker``): while it
    /// is open, sends return ``APNsOutcome/circuitOpen(reason:after:)`` at once, without a
    /// request, and a single probe now and then decides when it closes. Once APNs refused
    /// the credentials, every send, and every sender waiting for a stream, gets
    /// ``APNsOutcome/credentialsRefused(reason:)`` without a request.
    ///
    /// - Throws: ``APNsError`` when the notification is invalid (nothing is sent), when no
    ///   answer came before the deadline, or when the client shuts down.
    /// - Parameter timeout: the deadline for this send, retries included; nil uses
    ///   ``Configuration/requestTimeout``.
    public func send(_ notification: APNsNotification, timeout: Duration? = nil) async throws -> APNsOutcome {
        try notification.validate()
        if let reason = credentialsProblem { return .credentialsRefused(reason: reason) }
        let probe: Bool
        switch circuit.withLockedValue({ $0.admit(now: .now) }) {
        case .refuse(let reason, let after):
            return .circuitOpen(reason: reason, after: after)
        case .probe:
            probe = true
            logger.info("APNs kept failing; sending a probe request", metadata: ["apns.id": "\(notification.apnsID)"])
        case .send:
            probe = false
        }
        do {
            return try await attempts(notification, probe: probe, timeout: timeout)
        } catch let error as APNsError where error == .credentialsRefused {
            return .credentialsRefused(reason: credentialsProblem ?? .invalidProviderToken)
        } catch {
            if probe { circuit.withLockedValue { $0.probeUnanswered(now: .now, random: .random(in: 0..<1)) } }
            throw error
        }
    }

    /// Sends the notification until it is answered for good, the attempts run out or the
    /// circuit opens.
    private func attempts(_ notification: APNsNotification, probe: Bool, timeout: Duration?) async throws -> APNsOutcome {
        let deadline = NIODeadline.now() + TimeAmount(timeout ?? configuration.requestTimeout)
        let body = notification.payload
        var avoiding: Int?
        var attempt = 0
        while true {
            attempt += 1
            let connection = try await pool.lease(deadline: deadline, avoiding: avoiding)
            if let reason = credentialsProblem {
                pool.release(connection, succeeded: false)
                return .credentialsRefused(reason: reason)
            }
            // The circuit opened while this one waited for a stream: it doesn't go either.
            if !probe, let refusal = circuit.withLockedValue({ $0.refusal(now: .now) }) {
                pool.release(connection, succeeded: false)
                return .circuitOpen(reason: refusal.reason, after: refusal.after)
            }
            avoiding = connection.id
            var token: APNsProviderToken?
            if let tokens {
                let shared: APNsProviderToken
                do {
                    shared = try tokens.current()
                } catch {
                    pool.release(connection, succeeded: false)
                    throw APNsError(.invalidCredentials, detail: "\(error)")
                }
                switch pool.token(for: connection.id, shared: shared, now: configuration.now(), policy: tokenPolicy) {
                case .use(let chosen):
                    token = chosen
                case .retire:
                    pool.drain(connection.id)
                    pool.release(connection, succeeded: false)
                    attempt -= 1
                    continue
                }
            }

            let headers = requestHeaders(for: notification, token: token)
            let started = ContinuousClock.now
            // A send's first attempt on a connection not proven yet gets a shorter deadline
            // (Configuration.firstRequestTimeout); its retry has the rest of the send's.
            let unproven = attempt == 1 && !pool.hasSucceeded(connection.id)
            let requestDeadline = unproven ? min(deadline, NIODeadline.now() + TimeAmount(configuration.firstRequestTimeout)) : deadline
            metrics.started()
            let result: Result<APNsResponse, any Error>
            do {
                result = .success(try await connection.execute(headers: headers, body: body, deadline: requestDeadline))
            } catch {
                result = .failure(error)
            }
            metrics.ended()

            let response: APNsResponse
            switch result {
            case .failure(let error):
                pool.release(connection, succeeded: false)
                metrics.answered(status: 0, reason: nil, duration: ContinuousClock.now - started)
                if unproven, requestDeadline < deadline, let error = error as? APNsError, error == .deadlineExceeded,
                    attempt < configuration.maxAttempts
                {
                    logger.notice(
                        "APNs did not answer the first request of a new connection; closing it and trying another",
                        metadata: ["apns.id": "\(notification.apnsID)", "apns.connection_id": "\(connection.id)"]
                    )
                    pool.drain(connection.id)
                    continue
                }
                guard let error = error as? APNsError, error == .connectionClosed, attempt < configuration.maxAttempts,
                    NIODeadline.now() < deadline
                else { throw error }
                logger.debug("APNs stream closed before an answer; retrying", metadata: ["apns.id": "\(notification.apnsID)"])
                // The pool may not have seen the close yet: take the connection out now.
                if !connection.channel.isActive { pool.drain(connection.id) }
                try await Task.sleep(for: jittered(configuration.retryBackoff * attempt))
                continue
            case .success(let value):
                response = value
            }
            metrics.answered(status: response.status, reason: response.reason, duration: ContinuousClock.now - started)
            // The circuit and the credentials learn of the answer before the stream is given
            // back: the sender it goes to next must see them.
            let (wasOpen, circuitOpen) = circuit.withLockedValue { circuit in
                let wasOpen = circuit.isOpen
                guard (500...599).contains(response.status) else {
                    circuit.succeeded()
                    return (wasOpen, false)
                }
                // Shutdown is one server draining its connection, not an outage.
                guard response.reason != .shutdown else { return (wasOpen, wasOpen) }
                let reason = response.reason ?? .unknown("HTTP \(response.status)")
                return (wasOpen, circuit.failed(reason: reason, probe: probe, now: .now, random: .random(in: 0..<1)))
            }
            if !wasOpen && circuitOpen {
                logger.warning(
                    "APNs keeps answering 5xx; no requests until a probe gets another answer",
                    metadata: ["apns.status": "\(response.status)", "apns.reason": "\(response.reason?.rawValue ?? "")"]
                )
            } else if wasOpen && !circuitOpen {
                logger.notice("APNs answers again; requests resume")
            }

            let action = APNsResponseClassifier.classify(
                status: response.status,
                reason: response.reason,
                timestamp: response.timestamp,
                apnsID: response.apnsID ?? notification.apnsID
            )
            if case .outcome(.credentialsBroken(let reason)) = action { credentialsBroken(reason) }
            pool.release(connection, succeeded: response.status == 200)
            switch action {
            case .outcome(.credentialsBroken(let reason)):
                return .credentialsBroken(reason: reason)
            case .outcome(let outcome):
                return outcome
            case .retryElsewhere(let reason, let refreshToken, let retireConnection):
                if refreshToken, let tokens, let token {
                    metrics.providerTokenExpired()
                    let age = Int(configuration.now().timeIntervalSince(token.issuedAt))
                    // Only a token older than the minimum change interval is replaced.
                    guard (try? tokens.refresh(afterExpiry: token)) == true else {
                        let wait = Duration.seconds(tokenPolicy.minimumChangeInterval)
                        if tokens.isFirstExpiry(of: token) {
                            logger.warning(
                                "APNs says the provider token expired, but it is too young to be replaced: this machine's clock is probably wrong; the key's sends wait",
                                metadata: ["apns.token_age_s": "\(age)", "apns.retry_after_s": "\(wait.components.seconds)"]
                            )
                        }
                        return .retryLater(reason: reason, after: wait)
                    }
                    if tokens.isFirstExpiry(of: token) {
                        logger.warning(
                            "APNs says the provider token expired; signed a new one (if this recurs, check this machine's clock)",
                            metadata: ["apns.token_age_s": "\(age)"]
                        )
                    }
                }
                if retireConnection { pool.drain(connection.id) }
                if circuitOpen {
                    // Into an outage the caller's backoff decides, not more requests now.
                    return .retryLater(reason: reason, after: circuit.withLockedValue { $0.retryAfter(now: .now) })
                }
                let backoff = jittered(configuration.retryBackoff * attempt)
                guard attempt < configuration.maxAttempts, NIODeadline.now() + TimeAmount(backoff) < deadline else {
                    return .retryLater(reason: reason, after: backoff)
                }
                logger.debug(
                    "APNs asked to retry elsewhere",
                    metadata: ["apns.id": "\(notification.apnsID)", "apns.reason": "\(reason)", "apns.attempt": "\(attempt)"]
                )
                if !refreshToken { try await Task.sleep(for: backoff) }
            }
        }
    }

    /// `delay` less up to a fifth at random, so retries of many senders don't come in step.
    private func jittered(_ delay: Duration) -> Duration {
        delay * (1 - 0.2 * Double.random(in: 0..<1))
    }

    /// The request headers; `:path` and `authorization` are never indexed (Apple's guidance).
    func requestHeaders(for notification: APNsNotification, token: APNsProviderToken?) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(12)
        headers.add(name: ":method", value: "POST")
        headers.add(name: ":scheme", value: configuration.transport == .plaintext ? "http" : "https")
        headers.add(name: ":path", value: "/3/device/\(notification.deviceToken)", indexing: .neverIndexed)
        headers.add(name: ":authority", value: configuration.host)
        if let token {
            headers.add(name: "authorization", value: token.authorization, indexing: .neverIndexed)
        }
        headers.add(name: "apns-push-type", value: notification.pushType.rawValue)
        headers.add(name: "apns-id", value: notification.apnsID.lowercasedString, indexing: .nonIndexable)
        headers.add(name: "apns-topic", value: notification.topic ?? credentials.bundleID + notification.pushType.topicSuffix)
        headers.add(name: "apns-priority", value: String(notification.effectivePriority.rawValue))
        if let expiration = notification.expiration {
            headers.add(name: "apns-expiration", value: String(max(0, Int(expiration.timeIntervalSince1970))))
        }
        if let collapseID = notification.collapseID {
            headers.add(name: "apns-collapse-id", value: collapseID)
        }
        headers.add(name: "content-length", value: String(notification.payload.count))
        return headers
    }
}
