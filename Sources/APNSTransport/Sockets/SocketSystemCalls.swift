internal import Glibc

/// The socket system calls whose arguments are buffers or `sockaddr`s: the one place in the socket layer where
/// Swift values become C pointers (`recv`, `send`, `getsockname`/`getpeername`, `getaddrinfo`, `sockaddr` bytes).
enum SocketSystemCalls {
    /// `recv` into the start of `buffer` (at most `maxCount` bytes), retried on `EINTR`.
    static func receive(_ fd: Int32, into buffer: inout [UInt8], maxCount: Int, flags: Int32) -> SocketIOResult {
        let limit = min(maxCount, buffer.count)
        guard limit > 0 else { return .transferred(0) }
        return buffer.withUnsafeMutableBytes { bytes in
            while true {
                let count = recv(fd, bytes.baseAddress, limit, flags)
                let code = count < 0 ? errno : 0
                if code == EINTR { continue }
                return .of(count, reading: true, errno: code)
            }
        }
    }

    /// `send` with `MSG_NOSIGNAL` (a closed peer is `EPIPE`, not SIGPIPE), retried on `EINTR`.
    static func send(_ fd: Int32, _ bytes: RawSpan) -> SocketIOResult {
        guard !bytes.isEmpty else { return .transferred(0) }
        return bytes.withUnsafeBytes { buffer in
            while true {
                let count = Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
                let code = count < 0 ? errno : 0
                if code == EINTR { continue }
                return .of(count, reading: false, errno: code)
            }
        }
    }

    /// The local (`getsockname`) or peer (`getpeername`) address of `fd`.
    static func address(of fd: Int32, peer: Bool) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutableBytes(of: &storage) { bytes -> SocketAddress? in
            guard let base = bytes.baseAddress else { return nil }
            let pointer = base.assumingMemoryBound(to: sockaddr.self)
            let status = peer ? getpeername(fd, pointer, &length) : getsockname(fd, pointer, &length)
            guard status == 0 else { return nil }
            return address(sockaddr: base, length: Int(length))
        }
    }

    /// The TCP addresses `getaddrinfo` gives for `host` and `port`, duplicates dropped, in the resolver's order
    /// (perhaps none); `nameResolutionFailed` with the `gai_strerror` text (or errno's) on failure.
    static func addresses(host: String, port: Int) throws(TransportError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let reason = status == EAI_SYSTEM ? TransportError.errnoText(errno) : String(cString: gai_strerror(status))
            throw TransportError(.nameResolutionFailed, "\(host): \(reason)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let pointer = entry.pointee.ai_addr,
                let address = address(sockaddr: pointer, length: Int(entry.pointee.ai_addrlen)),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        return addresses
    }

    /// The bytes of a `sockaddr_in` or `sockaddr_in6`, as `SocketAddress` keeps them.
    static func bytes<Address>(of address: Address) -> [UInt8] {
        withUnsafeBytes(of: address) { Array($0) }
    }

    /// `inet_pton`: sets `ip` (an `in_addr` or `in6_addr`) to the address `literal` names in `family`; false when
    /// it names none.
    static func parseIP<IP>(_ literal: String, family: Int32, into ip: inout IP) -> Bool {
        withUnsafeMutableBytes(of: &ip) { inet_pton(family, literal, $0.baseAddress) } == 1
    }

    /// `inet_ntop`: `ip` (an `in_addr` or `in6_addr`) in `family` as text of at most `maximumLength` bytes with
    /// its NUL (`INET_ADDRSTRLEN`, `INET6_ADDRSTRLEN`); nil on failure.
    static func ipText<IP>(_ ip: IP, family: Int32, maximumLength: Int32) -> String? {
        var text = [CChar](repeating: 0, count: Int(maximumLength) + 1)
        let written = withUnsafeBytes(of: ip) { inet_ntop(family, $0.baseAddress, &text, socklen_t(text.count)) }
        guard written != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reads a `sockaddr` (from getaddrinfo, accept, getsockname); nil for families other than IPv4/IPv6.
    static func address(sockaddr pointer: UnsafeRawPointer, length: Int) -> SocketAddress? {
        let family = Int32(pointer.load(as: sockaddr.self).sa_family)
        switch family {
        case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
            let v4 = pointer.load(as: sockaddr_in.self)
            return SocketAddress(v4)
        case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
            let v6 = pointer.load(as: sockaddr_in6.self)
            return SocketAddress(v6)
        default:
            return nil
        }
    }

    /// Calls `body` with `address` as a `sockaddr` pointer and its length (for `connect` and `bind`).
    static func withSockAddr<Result>(_ address: SocketAddress, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result)
        -> Result
    {
        address.raw.withUnsafeBytes { bytes in
            // `raw` was copied from a sockaddr_in/sockaddr_in6, so its start is a valid sockaddr.
            body(bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(bytes.count))
        }
    }
}

// MARK: - SocketIOResult

/// The outcome of one non-blocking socket read or write.
public enum SocketIOResult: Equatable, Sendable {
    /// This many bytes moved (never zero for reads: see `endOfFile`).
    case transferred(Int)
    /// Nothing can move now (`EAGAIN`); wait for readiness.
    case wouldBlock
    /// The peer closed its side (reads only).
    case endOfFile
    /// The call failed with this `errno`.
    case failed(Int32)

    /// The result of a `recv`/`send` that returned `count` (reads: 0 is the end of the stream), `errno` when < 0.
    static func of(_ count: Int, reading: Bool, errno code: Int32) -> SocketIOResult {
        if count > 0 || (count == 0 && !reading) { return .transferred(count) }
        if count == 0 { return .endOfFile }
        return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
    }
}

extension Socket {
    /// Reads what is available into the start of `buffer`, at most `maxCount` bytes and at most `buffer.count`.
    public func receive(into buffer: inout [UInt8], maxCount: Int = .max) -> SocketIOResult {
        SocketSystemCalls.receive(fd, into: &buffer, maxCount: maxCount, flags: 0)
    }

    /// Copies what is available into the start of `buffer` without consuming it (`MSG_PEEK`).
    func peek(into buffer: inout [UInt8], maxCount: Int = .max) -> SocketIOResult {
        SocketSystemCalls.receive(fd, into: &buffer, maxCount: maxCount, flags: Int32(MSG_PEEK))
    }

    /// Writes what the kernel takes now; never raises SIGPIPE (`MSG_NOSIGNAL`).
    public func send(_ bytes: RawSpan) -> SocketIOResult {
        SocketSystemCalls.send(fd, bytes)
    }
}
