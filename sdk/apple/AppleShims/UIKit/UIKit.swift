// A shim of the UIKit symbols HeraldKitApple uses, so scripts/check-apple-glue.sh can
// type-check the glue on Linux. Declarations only, with Apple's names and signatures
// (../SYMBOLS.md); no body ever runs.
import Foundation

@MainActor
open class UIResponder: NSObject {}

@MainActor
open class UIApplication: UIResponder {
    @available(iOS, deprecated: 17.0, message: "Use UNUserNotificationCenter's setBadgeCount(_:)")
    open var applicationIconBadgeNumber: Int {
        get { fatalError() }
        set { fatalError() }
    }
    open var applicationState: UIApplication.State { fatalError() }
    open func registerForRemoteNotifications() { fatalError() }
    // Apple's are `nonisolated class let` (stored class properties are Apple's alone).
    nonisolated public static var willEnterForegroundNotification: NSNotification.Name { fatalError() }
    nonisolated public static var didEnterBackgroundNotification: NSNotification.Name { fatalError() }

    public enum State: Int, Sendable {
        case active, inactive, background
    }
}

public enum UIBackgroundFetchResult: UInt, Sendable {
    case newData, noData, failed
}
