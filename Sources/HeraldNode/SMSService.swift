import HeraldCore
import HeraldSMS
import Logging
import ServiceLifecycle

/// The SMS fallback's sender as one of the node's services: it runs until the node shuts
/// down (an SMS cut short is claimed again when its lease runs out, with the same
/// idempotency key).
struct SMSService: Service {
    let sender: SMSSender

    func run() async {
        await cancelWhenGracefulShutdown { await sender.run() }
    }
}
