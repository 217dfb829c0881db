/// Receives the object members a `JSONScanner` scan reports (`scanDocument(in:reportingMembersTo:to:)`): the nesting
/// depth of the object holding the member (1 for the document's own members), the key's string value and the
/// member's value, with the scanner (to read the key and value bytes). A member is reported once its value is
/// scanned, so the members of a nested object come before the member holding that object.
public protocol JSONMemberVisitor {
    mutating func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner)
}

/// A visitor for scans that report no members. It holds a byte: an empty struct passed `inout` has no address of
/// its own (swiftlang/swift#66099), and ThreadSanitizer then sees every scan on every thread write one place.
@usableFromInline
struct IgnoredMembers: JSONMemberVisitor {
    @usableFromInline var unused: UInt8 = 0
    @inlinable init() {}
    @inlinable func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {}
}

/// Reports members to a `JSONScanner.MemberVisitor` closure.
struct ClosureMemberVisitor: JSONMemberVisitor {
    let visit: (_ depth: Int, _ key: JSONScanner.Value, _ value: JSONScanner.Value) -> Void

    func member(depth: Int, key: JSONScanner.Value, value: JSONScanner.Value, in scanner: JSONScanner) {
        visit(depth, key, value)
    }
}
