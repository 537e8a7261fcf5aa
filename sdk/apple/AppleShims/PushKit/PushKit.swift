// A shim of the PushKit symbols HeraldKitApple uses, so scripts/check-apple-glue.sh can
// type-check the glue on Linux. Declarations only, with Apple's names and signatures
// (../SYMBOLS.md); no body ever runs.
import Dispatch
import Foundation

open class PKPushRegistry: NSObject {
    /// Apple's parameter is `dispatch_queue_t?`, which Swift spells `DispatchQueue?`.
    public init(queue: DispatchQueue?) { fatalError() }
    /// `weak` in Apple's declaration.
    open var delegate: (any PKPushRegistryDelegate)? {
        get { fatalError() }
        set { fatalError() }
    }
    open var desiredPushTypes: Set<PKPushType>? {
        get { fatalError() }
        set { fatalError() }
    }
    open func pushToken(for type: PKPushType) -> Data? { fatalError() }
}

/// Apple's second requirement is `optional` (Objective-C); here it is required, so a glue
/// method whose signature drifts from Apple's fails the check instead of never being called.
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)
    func pushRegistry(
        _ registry: PKPushRegistry,
        didReceiveIncomingPushWith payload: PKPushPayload,
        for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    )
}

open class PKPushCredentials: NSObject {
    open var token: Data { fatalError() }
}

open class PKPushPayload: NSObject {}

public struct PKPushType: RawRepresentable, Hashable, Sendable {
    public var rawValue: String { fatalError() }
    public init(rawValue: String) { fatalError() }
    /// `static let` in Apple's declaration.
    public static var voIP: PKPushType { fatalError() }
}
