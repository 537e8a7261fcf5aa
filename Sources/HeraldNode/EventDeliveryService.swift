import HeraldCore
import HeraldStore
import HeraldWebhooks
import Logging
import ServiceLifecycle

/// Webhooks and JPush callbacks as one of the node's services: both read the event log
/// (``EventStore``) and send through the node's outbound client, until the node shuts down
/// (a batch cut short is claimed again when its lease runs out).
struct EventDeliveryService: Service {
    let webhooks: WebhookDispatcher
    let callbacks: CallbackWorker

    init(store: EventStore, node: String, configuration: WebhookDelivery, outbound: OutboundAddressRule, logger: Logger) {
        webhooks = WebhookDispatcher(store: store, node: node, configuration: configuration, outbound: outbound, logger: logger)
        callbacks = CallbackWorker(store: store, configuration: configuration, outbound: outbound, logger: logger)
    }

    func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await webhooks.run() }
                group.addTask { await callbacks.run() }
            }
        }
    }
}
