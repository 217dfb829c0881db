import Foundation
import Testing

@testable import APNSBulkCLI

/// The cores a process may use, read from its affinity mask as `/proc/<pid>/status` prints it.
@Suite("usable cores from the affinity mask")
struct UsableCoresTests {
    @Test("Cpus_allowed counts its set bits, over comma-separated groups; no line or no bit is no answer")
    func masks() {
        #expect(UsableCores.allowedCores(inStatus: "Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(UsableCores.allowedCores(inStatus: "Cpus_allowed:\t2\n") == 1)
        #expect(UsableCores.allowedCores(inStatus: "Cpus_allowed:\tff,00000001\n") == 9)
        #expect(UsableCores.allowedCores(inStatus: "Cpus_allowed_list:\t0-1\n") == nil)
        #expect(UsableCores.allowedCores(inStatus: "Cpus_allowed:\t0\n") == nil)
        #expect(UsableCores.allowedCores(inStatus: "Cpus_allowed:\tzz\n") == nil)
    }

    @Test("this process: at least one core, and no more than the machine has")
    func thisProcess() {
        #expect((1...ProcessInfo.processInfo.processorCount).contains(UsableCores.count))
    }
}
