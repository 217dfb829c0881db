/// What one event of a state machine asks its shell to do, in order: every event of the pool's, a connection's and
/// a TLS connection's machine returns one of these (docs/ARCHITECTURE.md, "One convention"). None or one action,
/// the common case on the hot path (a request starts, an answer arrives), is held inline and costs no allocation;
/// more spill to an array.
enum MachineActions<Action> {
    /// Nothing to do.
    case none
    /// One action.
    case one(Action)
    /// Two or more actions, in order.
    case many([Action])

    /// One action.
    init(_ action: Action) {
        self = .one(action)
    }

    /// These actions, in order.
    init(_ actions: [Action]) {
        switch actions.count {
        case 0: self = .none
        case 1: self = .one(actions[0])
        default: self = .many(actions)
        }
    }

    /// Whether there is nothing to do.
    var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }

    /// How many actions there are.
    var count: Int {
        switch self {
        case .none: 0
        case .one: 1
        case .many(let actions): actions.count
        }
    }

    /// Adds `action` after the ones held.
    mutating func append(_ action: Action) {
        switch self {
        case .none: self = .one(action)
        case .one(let first): self = .many([first, action])
        case .many(var actions):
            self = .none  // the array stays uniquely referenced while it grows
            actions.append(action)
            self = .many(actions)
        }
    }

    /// Adds `more` after the ones held.
    mutating func append(contentsOf more: Self) {
        switch more {
        case .none: break
        case .one(let action): append(action)
        case .many(let actions): for action in actions { append(action) }
        }
    }

    /// The actions in order, as an array (for tests and for the shells' queues).
    var array: [Action] {
        switch self {
        case .none: []
        case .one(let action): [action]
        case .many(let actions): actions
        }
    }

    /// Hands each action to `body` in order, moved out of the list: an action that carries an outcome is not
    /// copied on its way to the shell (the `for`-`in` of `Sequence` copies each one).
    @inline(__always)
    consuming func consumeEach<Failure: Error>(_ body: (consuming Action) throws(Failure) -> Void) throws(Failure) {
        switch consume self {
        case .none: break
        case .one(let action): try body(action)
        case .many(let actions): for action in actions { try body(action) }
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
        private var storage: MachineActions
        private var index = 0

        init(storage: MachineActions) {
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
        Iterator(storage: self)
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

extension MachineActions: CustomStringConvertible {
    /// The actions as an array would print them.
    var description: String { "\(array)" }
}
