import Foundation

/// The exclusive lock a run holds on its result file and journal for its whole life: an `flock` on
/// `<results>.lock`, a small file that also names the holder's pid for the message a second run gets. The kernel
/// drops the lock when the process ends, even by `kill -9`; a lock file left behind by a killed run is simply
/// taken over by the next run. A run that ends normally removes it.
public final class RunLock {
    /// The lock file that goes with a result file.
    public static func path(forResults resultsPath: String) -> String { resultsPath + ".lock" }

    /// The lock file's path.
    public let path: String
    private var file: POSIXFile?

    /// Takes the lock for `resultsPath`, or throws `.runLocked` at once, naming the pid of the run holding it.
    /// A result file's folder that is missing or not writable is named as such, not by the lock file that would
    /// have been the first made in it.
    public init(resultsPath: String, pid: Int32 = ProcessInfo.processInfo.processIdentifier) throws(PipelineError) {
        path = Self.path(forResults: resultsPath)
        try OutputPathCheck.checkFolder(
            of: resultsPath, option: nil, holds: "the result file, its journal, lock and campaign record go there")
        // A holder that ends removes the file; a lock taken on the removed file would guard nothing, so check
        // that the path still names the locked file, and start again if it does not.
        for _ in 0..<8 {
            let candidate = try POSIXFile.openForLocking(path)
            guard try candidate.tryLockExclusively() else {
                let holder = Self.holder(candidate)
                throw PipelineError(
                    .runLocked,
                    "\(resultsPath) is in use by another run (pid \(holder)); wait for it to end, or stop it first")
            }
            guard candidate.isStill(at: path) else { continue }
            try candidate.truncate(to: 0)
            let text = Array("\(pid)\n".utf8)
            try candidate.write(text, count: text.count)
            file = candidate
            return
        }
        throw PipelineError(.runLocked, "\(path): the lock file keeps being replaced")
    }

    /// Removes the lock file, then lets the lock go. Also done when the lock is released by `deinit`.
    public func release() {
        guard file != nil else { return }
        POSIXFile.remove(path)
        file = nil
    }

    deinit { release() }

    /// The pid written in a held lock file ("unknown" while its holder is still writing it).
    private static func holder(_ file: POSIXFile) -> String {
        let bytes = file.peek(at: 0, count: 32) ?? []
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return !text.isEmpty && text.allSatisfy(\.isNumber) ? text : "unknown"
    }
}
