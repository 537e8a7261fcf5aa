import Foundation
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One request stream on a sandbox connection while it arrives: headers and body are
/// gathered here, then the connection's ``SandboxRootHandler`` answers the request.
///
/// Streams are plain values keyed by stream id rather than child channels: the sandbox
/// must not be the bottleneck of a benchmark that shares its machine.
struct SandboxStreamState {
    private var method = ""
    private var path = ""
    private var headers: [(name: String, value: String)] = []
    private var body: [UInt8] = []

    mutating func receive(_ frame: HPACKHeaders) {
        for (name, value, _) in frame {
            switch name {
            case ":method": method = value
            case ":path": path = value
            // HTTP/2 header names are lowercase: NIOHTTP2 refuses others.
            case let pseudo where pseudo.hasPrefix(":"): break
            default:
                if headers.isEmpty { headers.reserveCapacity(12) }
                headers.append((name, value))
            }
        }
    }

    mutating func receive(_ data: IOData) {
        if case .byteBuffer(let buffer) = data {
            body.append(contentsOf: buffer.readableBytesView)
        }
    }

    var request: SandboxRequest {
        SandboxRequest(method: method, path: path, headers: headers, body: body)
    }
}
