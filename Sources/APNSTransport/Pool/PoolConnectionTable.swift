/// The pool's open connections by id, in a small array searched in order: a pool holds a handful of connections,
/// and comparing a few ids costs less than hashing one, which every submitted request would pay.
struct PoolConnectionTable {
    private var connections: [APNSClientConnection] = []

    subscript(id: ConnectionPoolStateMachine.ConnectionID) -> APNSClientConnection? {
        get {
            for connection in connections where connection.id == id { return connection }
            return nil
        }
        set {
            connections.removeAll { $0.id == id }
            if let newValue { connections.append(newValue) }
        }
    }
}
