/// The duplicate filter's in-memory index: one 64-bit cell per distinct pair, holding the pair's fingerprint (the
/// high `fingerprintBits` bits) and where its exact key starts in the scratch file (the low bits, offset + 1, so an
/// empty cell is 0). Two different pairs may share a fingerprint, so a matching fingerprint is only a candidate:
/// the caller confirms it against the exact key (`isStored`), and only a confirmed match means "already seen".
///
/// The cells are split into 256 segments by the hash's top byte. A segment is an ordered linear-probing table: a
/// fingerprint's home slot is multiply-high (`fingerprint × slots >> fingerprintBits`, so any slot count works and
/// homes rise with fingerprints), cells stay sorted by fingerprint (an insert shifts the rest of its run one cell
/// right), a lookup stops at the first larger fingerprint, and runs pushed past the last slot spill into a few
/// overflow cells instead of wrapping. A segment grows by 1/16 when it would pass 9/10 full, in one ordered pass,
/// so the cells stay 84 to 90 % full (8.9 to 9.5 bytes a pair) and only one segment (1/256 of the table) is ever
/// being copied: growing adds no peak beyond it.
struct FingerprintTable {
    static let segmentCount = 256
    /// A segment is never fuller than this many cells in ten of its home slots.
    static let maximumLoadTenths = 9
    static let minimumSegmentSlots = 16
    /// Cells after a segment's last home slot, for runs pushed past it (more are appended if one gets longer).
    static let overflowCells = 8

    /// Width of the stored fingerprint (24 in production; tests use tiny widths so fingerprints collide).
    let fingerprintBits: Int
    private let locationBits: Int
    /// `cell &>> locationBits & fingerprintMask` is a cell's fingerprint with masking shifts (no over-shift
    /// checks in the loops): with 0-bit fingerprints the shift by 64 masks to 0, and the mask then clears it.
    private let fingerprintMask: UInt64
    private var segments: [[UInt64]]
    private var homeSlots: [Int]
    private var segmentCounts: [Int]
    private(set) var count = 0

    init(fingerprintBits: Int = 24, minimumCapacity: Int = 0) {
        precondition((0...32).contains(fingerprintBits), "fingerprint width out of range")
        self.fingerprintBits = fingerprintBits
        locationBits = 64 - fingerprintBits
        fingerprintMask = fingerprintBits == 0 ? 0 : ~0
        let slots = max(Self.minimumSegmentSlots, minimumCapacity / Self.segmentCount * 10 / Self.maximumLoadTenths + 1)
        segments = [[UInt64]](
            repeating: [UInt64](repeating: 0, count: slots + Self.overflowCells), count: Self.segmentCount)
        homeSlots = [Int](repeating: slots, count: Self.segmentCount)
        segmentCounts = [Int](repeating: 0, count: Self.segmentCount)
    }

    /// Bytes held by the cells.
    var memoryBytes: Int { segments.reduce(0) { $0 + $1.count } * MemoryLayout<UInt64>.stride }

    /// The largest location a cell can hold.
    var maximumLocation: UInt64 { locationBits == 64 ? .max : (1 << UInt64(locationBits)) - 1 }

    /// Where a lookup of one hash stands: its segment and fingerprint, and the next cell to look at (once no
    /// candidate is left, the cell where the pair goes).
    struct Probe {
        let segment: Int
        let fingerprint: UInt64
        fileprivate(set) var index: Int
    }

    /// Starts the lookup of the pair hashed to `hash`: pass the probe to `nextCandidate` until it answers nil, then,
    /// if no candidate's exact key was the pair's, to `insert(location:at:)`.
    func probe(hash: UInt64) -> Probe {
        let segment = Int(truncatingIfNeeded: hash >> 56)
        let fingerprint = fingerprintBits == 0 ? 0 : (hash << 8) >> UInt64(64 - fingerprintBits)
        return Probe(segment: segment, fingerprint: fingerprint, index: home(fingerprint, slots: homeSlots[segment]))
    }

    /// The location stored in the probe's next cell with its fingerprint, a candidate the caller confirms against
    /// the exact key; nil when there is none left (a pair's fingerprint only shares a run with others).
    func nextCandidate(_ probe: inout Probe) -> UInt64? {
        let locationShift = UInt64(truncatingIfNeeded: locationBits)
        let count = segments[probe.segment].count
        while probe.index < count {
            let cell = segments[probe.segment][probe.index]
            if cell == 0 { return nil }
            let stored = cell &>> locationShift & fingerprintMask
            if stored > probe.fingerprint { return nil }
            probe.index += 1
            if stored == probe.fingerprint { return cell & maximumLocation }
        }
        return nil
    }

    /// Stores a new pair at `location` (non-zero) where a probe that found no match for it ended.
    mutating func insert(location: UInt64, at probe: Probe) {
        precondition(location != 0 && location <= maximumLocation, "location out of range")
        let segment = probe.segment
        var cells: [UInt64] = []
        swap(&cells, &segments[segment])  // work on the segment's array in place, uniquely referenced
        defer { swap(&cells, &segments[segment]) }
        Self.insert(probe.fingerprint << UInt64(locationBits) | location, at: probe.index, in: &cells)
        segmentCounts[segment] += 1
        count += 1
        if segmentCounts[segment] * 10 > homeSlots[segment] * Self.maximumLoadTenths { grow(&cells, segment: segment) }
    }

    /// The home cell of the pair hashed to `hash`, read ahead of its insert: a caller with several pairs reads all
    /// their home cells first, so their cache misses overlap instead of coming one after the other.
    func homeCell(hash: UInt64) -> UInt64 {
        let segment = Int(truncatingIfNeeded: hash >> 56)
        let fingerprint = fingerprintBits == 0 ? 0 : (hash << 8) >> UInt64(64 - fingerprintBits)
        return segments[segment][home(fingerprint, slots: homeSlots[segment])]
    }

    /// The slot where a fingerprint's run starts: multiply-high, so any slot count works and order is kept.
    @inline(__always)
    private func home(_ fingerprint: UInt64, slots: Int) -> Int {
        Int(
            truncatingIfNeeded: (fingerprint &* UInt64(truncatingIfNeeded: slots))
                &>> UInt64(truncatingIfNeeded: fingerprintBits))
    }

    /// Puts `cell` at `index`, shifting the cells from there to the next empty one a cell to the right.
    private static func insert(_ cell: UInt64, at index: Int, in cells: inout [UInt64]) {
        var carried = cell
        do {
            var span = cells.mutableSpan  // bounds-checked, without a uniqueness check per element
            var position = index
            while position < span.count {
                let next = span[position]
                span[position] = carried
                if next == 0 { return }
                carried = next
                position += 1
            }
        }
        cells.append(carried)
    }

    /// Gives every segment the home slots `pairs` pairs need (never fewer than it has): sized once for a whole
    /// input, the table no longer grows a segment at a time, re-placing each cell about 16 times over.
    mutating func reserveCapacity(_ pairs: Int) {
        let slots = pairs / Self.segmentCount * 10 / Self.maximumLoadTenths + 1
        for segment in 0..<Self.segmentCount where homeSlots[segment] < slots {
            var cells: [UInt64] = []
            swap(&cells, &segments[segment])
            rebuild(&cells, segment: segment, slots: slots)
            swap(&cells, &segments[segment])
        }
    }

    /// Rebuilds one segment with 1/16 more home slots.
    private mutating func grow(_ cells: inout [UInt64], segment: Int) {
        rebuild(&cells, segment: segment, slots: homeSlots[segment] + max(homeSlots[segment] / 16, 1))
    }

    /// Rebuilds one segment with `slots` home slots, in one pass: the cells are already in fingerprint order.
    private mutating func rebuild(_ cells: inout [UInt64], segment: Int, slots: Int) {
        // Homes rise with fingerprints, so a cell's place is its home or the one after the cell before it; past
        // the overflow cells, the rest of a run is appended (its places are then consecutive).
        var grown = [UInt64](repeating: 0, count: slots + Self.overflowCells)
        var spilled: [UInt64] = []
        var next = 0
        let locationShift = UInt64(truncatingIfNeeded: locationBits)
        do {
            var span = grown.mutableSpan
            let capacity = span.count
            for cell in cells where cell != 0 {
                let index = max(home(cell &>> locationShift & fingerprintMask, slots: slots), next)
                if index < capacity { span[index] = cell } else { spilled.append(cell) }
                next = index &+ 1
            }
        }
        grown.append(contentsOf: spilled)
        homeSlots[segment] = slots
        cells = grown
    }
}
