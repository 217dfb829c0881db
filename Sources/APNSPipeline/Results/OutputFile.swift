internal import Glibc

/// Writes a small output file whole (the mock's port file, CA and counters): a new path or a regular file is
/// replaced atomically (a temporary file beside it, renamed over it: a script polling for the file never reads half
/// of it); a device, a FIFO (/dev/null, a pipe a script reads) or a symbolic link (/dev/stdout) is written in place,
/// so it stays what it was. `POSIXFile.replaceAtomically` with `throughLinks`, for the modules that write such files
/// themselves.
public enum OutputFile {
    /// Writes `bytes` as the whole content of `path`; a new file gets `mode` less the umask.
    public static func write(_ bytes: [UInt8], toPath path: String, mode: UInt32 = 0o666) throws(PipelineError) {
        try POSIXFile.replaceAtomically(path, with: bytes, mode: mode_t(mode), throughLinks: true)
    }
}
