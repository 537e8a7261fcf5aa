import CoreMetrics
import HeraldMQTT
import HeraldStore
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// The CONNECT's credentials, checked off the event loop by ``DeviceAuthenticator``; the
/// answer comes back to the loop, slowed by ``ConnectThrottle`` after repeated failures.
extension MQTTConnectionHandler {
    func authenticate(clientID: String, username: String, password: String, channel: any Channel) {
        let context = self.context
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        let address = channel.remoteAddress?.ipAddress
        let signal = CancellationSignal()
        context.tasks.submit(cancelledBy: signal) {
            let result: AuthResult =
                if context.refusesSessions.load(ordering: .relaxed) {
                    .refused(.serverUnavailable)
                } else {
                    await context.authenticator.authenticate(clientID: clientID, username: username, password: password)
                }
            channel.eventLoop.execute {
                handler.value.authenticationEnded(result, clientID: clientID, address: address)
            }
        }
        authentication = signal
        timers.authenticationStarted(at: .now())
    }

    /// The credentials were checked (or the check timed out, see ``sweep(now:)``). A
    /// failure past the throttle's free ones is answered after its delay, scheduled on the
    /// loop, which serves other connections meanwhile; a success is never delayed.
    func authenticationEnded(_ result: AuthResult, clientID: String, address: String?) {
        guard authentication != nil, let channelContext else { return }
        authentication = nil
        timers.authenticationEnded()
        switch result {
        case .accepted(let device):
            self.device = device
        case .refused(let code):
            context.metrics.authFailures.increment()
            if code == .badUsernameOrPassword {
                let delay = context.throttle.withLockedValue { $0.failed(registrationID: clientID, address: address, at: .now) }
                if delay > .zero {
                    context.metrics.authThrottled.increment()
                    channelContext.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                        self.perform(self.machine.authenticated(result))
                    }
                    return
                }
            }
        }
        perform(machine.authenticated(result))
    }
}
