import NIOCore
import NIOHTTP2

/// The flow-control credit a handler that takes DATA frames without a stream multiplexer
/// gives back to its peer (nobody else does; without it the peer's 64 KiB initial window
/// runs out and the connection stalls): a stream's window while the stream is open, and
/// the connection's in 32 KiB steps.
public struct HTTP2ReceiveWindow: Sendable {
    private var unacknowledgedBytes = 0

    public init() {}

    /// The WINDOW_UPDATE frames to write for a DATA frame just received (often none).
    public mutating func received(_ data: HTTP2Frame.FramePayload.Data, on streamID: HTTP2StreamID) -> [HTTP2Frame] {
        let length = data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        guard length > 0 else { return [] }
        var updates: [HTTP2Frame] = []
        if !data.endStream {
            updates.append(HTTP2Frame(streamID: streamID, payload: .windowUpdate(windowSizeIncrement: length)))
        }
        unacknowledgedBytes += length
        if unacknowledgedBytes >= 1 << 15 {
            updates.append(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: unacknowledgedBytes)))
            unacknowledgedBytes = 0
        }
        return updates
    }
}
