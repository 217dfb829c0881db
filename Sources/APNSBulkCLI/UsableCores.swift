import Foundation

/// How many cores this process may run on: the affinity mask Linux reports (`Cpus_allowed` in
/// `/proc/self/status`, set by `taskset` or a container's cpuset), which `ProcessInfo.activeProcessorCount` does
/// not read. Elsewhere, or when the mask cannot be read, the processor count.
enum UsableCores {
    static var count: Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let mask = allowedCores(inStatus: status) else {
            return ProcessInfo.processInfo.activeProcessorCount
        }
        return mask
    }

    /// The number of cores the `Cpus_allowed:` line of a `/proc/<pid>/status` text allows (hex digits, in groups
    /// of eight separated by commas), or nil without one.
    static func allowedCores(inStatus status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var cores = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && !character.isWhitespace {
            guard let digit = character.hexDigitValue else { return nil }
            cores += digit.nonzeroBitCount
        }
        return cores > 0 ? cores : nil
    }
}
