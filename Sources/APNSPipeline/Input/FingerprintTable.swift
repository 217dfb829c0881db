/// The duplicate filter's in-memory index: one 64-bit cell per distinct pair, holding the pair's fingerprint (the
/// high `fingerprintBits` bits) and where its exact key starts in the scratch file (the low bits, offset + 1, so an
/// empty cell is 0). Two different pairs may share a fingerprint, so a matching fingerprint is only a candidate:
/// the caller confirms it against the exact key (`isStored`), and only a confirmed match means "already seen".
///
/// Memory: the cells are split into 256 segments by the hash's top byte, each an open-addressing table with linear
/// probing and a home slot chosen by multiply-high of the fingerprint (`fingerprint × capacity >> fingerprintBits`),
/// so a cell alone tells where it belongs and a segment can be rebuilt from its own cells. A segment grows by 1/16
/// when it would pass 9/10 full, so the cells stay 84 to 90 % full (8.9 to 9.5 bytes a pair), and only one segment
/// (1/256 of the table) is ever copied at a time, so growing adds no peak beyond it.
struct FingerprintTable {
    static let segmentCount = 256
    /// A segment is never fuller than this many cells in ten.
    static let maximumLoadTenths = 9
    static let minimumSegmentCapacity = 16

    /// Width of the stored fingerprint (24 in production; tests use tiny widths so fingerprints collide).
    let fingerprintBits: Int
    private let locationBits: Int
    private var segments: [[UInt64]]
    private var segmentCounts: [Int]
    private(set) var count = 0

    init(fingerprintBits: Int = 24, minimumCapacity: Int = 0) {
        precondition((0...32).contains(fingerprintBits), "fingerprint width out of range")
        self.fingerprintBits = fingerprintBits
        locationBits = 64 - fingerprintBits
        let perSegment = minimumCapacity / Self.segmentCount * 10 / Self.maximumLoadTenths
        let capacity = max(Self.minimumSegmentCapacity, perSegment + 1)
        segments = [[UInt64]](repeating: [UInt64](repeating: 0, count: capacity), count: Self.segmentCount)
        segmentCounts = [Int](repeating: 0, count: Self.segmentCount)
    }

    /// Bytes held by the cells.
    var memoryBytes: Int { segments.reduce(0) { $0 + $1.count } * MemoryLayout<UInt64>.stride }

    /// The largest location a cell can hold.
    var maximumLocation: UInt64 { locationBits == 64 ? .max : (1 << UInt64(locationBits)) - 1 }

    /// Stores the pair hashed to `hash` at `location` (non-zero) unless a cell with its fingerprint passes
    /// `isStored` (the exact key at that cell's location is the pair's); true when it was stored (a new pair).
    mutating func insert(
        hash: UInt64, location: UInt64, isStored: (UInt64) throws(PipelineError) -> Bool
    ) throws(PipelineError) -> Bool {
        precondition(location != 0 && location <= maximumLocation, "location out of range")
        let segment = Int(truncatingIfNeeded: hash >> 56)
        let fingerprint = fingerprintBits == 0 ? 0 : (hash << 8) >> UInt64(64 - fingerprintBits)
        let locationMask = maximumLocation
        var index = home(fingerprint, capacity: segments[segment].count)
        while true {
            let cell = segments[segment][index]
            if cell == 0 { break }
            if cell >> UInt64(locationBits) == fingerprint, try isStored(cell & locationMask) { return false }
            index += 1
            if index == segments[segment].count { index = 0 }
        }
        let cell = fingerprint << UInt64(locationBits) | location
        if (segmentCounts[segment] + 1) * 10 > segments[segment].count * Self.maximumLoadTenths {
            grow(segment)
            Self.place(cell, in: &segments[segment], home: home(fingerprint, capacity: segments[segment].count))
        } else {
            segments[segment][index] = cell
        }
        segmentCounts[segment] += 1
        count += 1
        return true
    }

    /// The slot where a fingerprint's probe starts: multiply-high, so any capacity works and order is kept.
    @inline(__always)
    private func home(_ fingerprint: UInt64, capacity: Int) -> Int {
        Int(truncatingIfNeeded: (fingerprint &* UInt64(capacity)) >> UInt64(fingerprintBits))
    }

    /// Rebuilds one segment 1/16 larger from its own cells.
    private mutating func grow(_ segment: Int) {
        let old = segments[segment]
        var cells = [UInt64](repeating: 0, count: old.count + max(old.count / 16, 1))
        for cell in old where cell != 0 {
            let fingerprint = fingerprintBits == 0 ? 0 : cell >> UInt64(locationBits)
            Self.place(cell, in: &cells, home: home(fingerprint, capacity: cells.count))
        }
        segments[segment] = cells
    }

    /// Puts a cell in the first empty slot from `home` on (there always is one: a segment is never full).
    private static func place(_ cell: UInt64, in cells: inout [UInt64], home: Int) {
        var index = home
        while cells[index] != 0 {
            index += 1
            if index == cells.count { index = 0 }
        }
        cells[index] = cell
    }
}
