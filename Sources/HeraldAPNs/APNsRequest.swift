import NIOCore
import NIOHPACK

/// A request waiting to be written on a connection.
struct APNsRequest: Sendable {
    var headers: HPACKHeaders
    var body: ByteBuffer
    var deadline: NIODeadline
    var promise: EventLoopPromise<APNsResponse>
}
