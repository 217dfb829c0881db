/// Emptying the reused buffers of stream slots and field lists without touching arrays that hold nothing.
extension Array {
    /// Removes every element and keeps the capacity. An empty array is left alone:
    /// `removeAll(keepingCapacity: true)` on one that never held anything (most answers carry no body, and a server
    /// other than APNs sends no apns-id) still checks its storage and makes an empty buffer.
    @inline(__always)
    mutating func removeAllKeepingStorage() {
        if !isEmpty { removeAll(keepingCapacity: true) }
    }
}
