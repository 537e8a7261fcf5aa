// A shim of the Security (and the CoreFoundation / MacTypes) symbols HeraldKitApple uses,
// so scripts/check-apple-glue.sh can type-check the glue on Linux. Declarations only, with
// Apple's names and signatures (../SYMBOLS.md); no body ever runs.
import Foundation

// CoreFoundation's types, which Linux Foundation doesn't export. On Apple platforms they
// are toll-free bridged to the Foundation classes named here; the aliases give the glue
// the same conversions (`[String: Any] as CFDictionary`, `kSecClass as String`).
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias OSStatus = Int32

public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { fatalError() }
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { fatalError() }
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus { fatalError() }

public var errSecSuccess: OSStatus { fatalError() }
public var errSecItemNotFound: OSStatus { fatalError() }

// Apple's are `let` constants; computed here, read the same way.
public var kSecClass: CFString { fatalError() }
public var kSecClassGenericPassword: CFString { fatalError() }
public var kSecAttrService: CFString { fatalError() }
public var kSecAttrAccount: CFString { fatalError() }
public var kSecAttrAccessGroup: CFString { fatalError() }
public var kSecAttrAccessible: CFString { fatalError() }
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString { fatalError() }
public var kSecValueData: CFString { fatalError() }
public var kSecReturnData: CFString { fatalError() }
public var kSecMatchLimit: CFString { fatalError() }
public var kSecMatchLimitOne: CFString { fatalError() }
