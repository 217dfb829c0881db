/// What one event of a state machine asks its shell to do, in order: every event of the pool's, a connection's and
/// a TLS connection's machine returns one of these (docs/ARCHITECTURE.md, "One convention"). None or one action,
/// the common case on the hot path (a request starts, an answer arrives), is held inline and costs no allocation;
/// more spill to an array.
struct MachineActions<Action> {
    enum Storage {
        case none
        case one(Action)
        case many([Action])
    }

    private(set) var storage: Storage

    /// Nothing to do.
    static var none: Self { Self(storage: .none) }

    init(storage: Storage) {
        self.storage = storage
    }

    /// One action.
    init(_ action: Action) {
        storage = .one(action)
    }

    /// These actions, in order.
    init(_ actions: [Action]) {
        switch actions.count {
        case 0: storage = .none
        case 1: storage = .one(actions[0])
        default: storage = .many(actions)
        }
    }

    /// Whether there is nothing to do.
    var isEmpty: Bool {
        if case .none = storage { return true }
        return false
    }

    /// How many actions there are.
    var count: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let actions): actions.count
        }
    }

    /// Adds `action` after the ones held.
    mutating func append(_ action: Action) {
        switch storage {
        case .none: storage = .one(action)
        case .one(let first): storage = .many([first, action])
        case .many(var actions):
            storage = .none  // the array stays uniquely referenced while it grows
            actions.append(action)
            storage = .many(actions)
        }
    }

    /// Adds `more` after the ones held.
    mutating func append(contentsOf more: Self) {
        switch more.storage {
        case .none: break
        case .one(let action): append(action)
        case .many(let actions): for action in actions { append(action) }
        }
    }

    /// The actions in order, as an array (for tests and for the shells' queues).
    /// Hands each action to `body` in order, moved out of the list: an action that carries an outcome is not
    /// copied on its way to the shell (the `for`-`in` of `Sequence` copies each one).
    @inline(__always)
    consuming func consumeEach<Failure: Error>(_ body: (consuming Action) throws(Failure) -> Void) throws(Failure) {
        var taken = Storage.none
        swap(&taken, &storage)
        switch consume taken {
        case .none: break
        case .one(let action): try body(action)
        case .many(let actions): for action in actions { try body(action) }
        }
    }

    var array: [Action] {
        switch storage {
        case .none: []
        case .one(let action): [action]
        case .many(let actions): actions
        }
    }

    /// Adds `rhs` after the actions `lhs` holds.
    static func += (lhs: inout Self, rhs: Self) {
        lhs.append(contentsOf: rhs)
    }

    /// `lhs`, then `rhs`.
    static func + (lhs: Self, rhs: Self) -> Self {
        var all = lhs
        all.append(contentsOf: rhs)
        return all
    }
}

extension MachineActions: Sequence {
    /// Walks the actions in order.
    struct Iterator: IteratorProtocol {
        private var storage: Storage
        private var index = 0

        init(storage: Storage) {
            self.storage = storage
        }

        mutating func next() -> Action? {
            switch storage {
            case .none:
                return nil
            case .one(let action):
                storage = .none
                return action
            case .many(let actions):
                guard index < actions.count else { return nil }
                index += 1
                return actions[index - 1]
            }
        }
    }

    func makeIterator() -> Iterator {
        Iterator(storage: storage)
    }

    var underestimatedCount: Int { count }
}

extension MachineActions: ExpressibleByArrayLiteral {
    init(arrayLiteral actions: Action...) {
        self.init(actions)
    }
}

extension MachineActions: Equatable where Action: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.array == rhs.array
    }
}

extension MachineActions: Hashable where Action: Hashable {
    func hash(into hasher: inout Hasher) {
        hasher.combine(array)
    }
}

extension MachineActions: Sendable where Action: Sendable {}

extension MachineActions.Storage: Sendable where Action: Sendable {}

extension MachineActions: CustomStringConvertible {
    /// The actions as an array would print them.
    var description: String { "\(array)" }
}
