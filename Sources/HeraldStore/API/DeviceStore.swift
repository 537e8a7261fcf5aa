import HeraldCore

/// Devices as the Open API keeps them, per app, on the durable pool (``APIStore/devices``):
/// registration and authentication, aliases and tags, Live Activity tokens, presence,
/// imports, receipts and what a diagnosis reads.
public struct DeviceStore: StoreFacade {
    let core: StoreCore
}

extension APIStore {
    /// Devices, their aliases, tags and tokens.
    public var devices: DeviceStore { DeviceStore(core: core) }
}
