import HeraldCore
import Hummingbird

/// JPush's `?platform=android,ios` on `GET`/`DELETE /v3/aliases/{alias}` and
/// `DELETE /v3/tags/{tag}`: only the devices of these platforms are listed or changed.
/// Absent or empty means every platform, as in JPush.
///
/// JPush's official clients send it (`delete_alias(alias, platform)` in the Python one), so
/// ignoring it would clear an alias or tag from devices the operator meant to keep. An
/// unknown name is refused (`1003`) and nothing changes.
enum PlatformQuery {
    /// The platforms' raw values, or nil for every platform.
    static func platforms(_ request: Request) throws(HeraldError) -> [String]? {
        guard let value = request.uri.queryParameters["platform"], !value.isEmpty else { return nil }
        var platforms: [String] = []
        for name in value.split(separator: ",", omittingEmptySubsequences: false).map(\.trimmingHTTPWhitespace) {
            guard let named = Platform.named(jpush: String(name)) else {
                throw .invalidField("platform", "unknown platform '\(name)' (expected a comma-separated list: android, ios, …)")
            }
            platforms += named.map(\.rawValue).filter { !platforms.contains($0) }
        }
        return platforms
    }
}
