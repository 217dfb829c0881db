/// The sends waiting for their back-off to pass, ordered by when they are due (a binary min-heap).
struct RetryQueue {
    private struct Item {
        let due: Double
        let order: UInt64
        let send: PendingSend
        func precedes(_ other: Item) -> Bool { due < other.due || (due == other.due && order < other.order) }
    }

    private var heap: [Item] = []
    private var nextOrder: UInt64 = 0

    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }
    /// When the earliest send is due, if any.
    var nextDue: Double? { heap.first?.due }

    mutating func push(_ send: PendingSend, due: Double) {
        heap.append(Item(due: due, order: nextOrder, send: send))
        nextOrder += 1
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest send if it is due at `now`.
    mutating func popDue(now: Double) -> PendingSend? {
        guard let first = heap.first, first.due <= now else { return nil }
        return popFirst()
    }

    /// Removes every send, earliest first.
    mutating func drain() -> [PendingSend] {
        var sends: [PendingSend] = []
        sends.reserveCapacity(heap.count)
        while let send = popFirst() { sends.append(send) }
        return sends
    }

    private mutating func popFirst() -> PendingSend? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let item = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var best = parent
            if left < heap.count, heap[left].precedes(heap[best]) { best = left }
            if right < heap.count, heap[right].precedes(heap[best]) { best = right }
            guard best != parent else { break }
            heap.swapAt(parent, best)
            parent = best
        }
        return item.send
    }
}
