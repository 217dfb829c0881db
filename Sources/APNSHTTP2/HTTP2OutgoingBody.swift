/// A body a session is sending (a client's request body, a server's response body): its bytes, kept alive (not
/// copied) until the stream ends, and how many of them have gone into DATA frames.
struct HTTP2OutgoingBody {
    var bytes: [UInt8] = []
    var offset = 0

    /// Copies the next bytes into `window`; returns how many, and whether they were the last.
    mutating func fill(_ window: Nghttp2OutputWindow) -> (count: Int, isLast: Bool) {
        let count = window.fill(from: bytes, offset: offset)
        offset += count
        return (count, offset >= bytes.count)
    }
}
