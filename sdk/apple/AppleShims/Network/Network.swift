// A shim of the Network symbols HeraldKitApple uses, so scripts/check-apple-glue.sh can
// type-check the glue on Linux. Declarations only, with Apple's names and signatures
// (../SYMBOLS.md); no body ever runs.
import Dispatch
import Foundation

public final class NWPathMonitor {
    public init() { fatalError() }
    public final var pathUpdateHandler: (@Sendable (NWPath) -> Void)? {
        get { fatalError() }
        set { fatalError() }
    }
    public final func start(queue: DispatchQueue) { fatalError() }
    public final func cancel() { fatalError() }
}

public struct NWPath {
    /// `let` in Apple's declaration.
    public var status: NWPath.Status { fatalError() }
    public func usesInterfaceType(_ type: NWInterface.InterfaceType) -> Bool { fatalError() }

    public enum Status {
        case satisfied, unsatisfied, requiresConnection
    }
}

public struct NWInterface {
    public enum InterfaceType {
        case other, wifi, cellular, wiredEthernet, loopback
    }
}
