/// Writes a run's report files (`--summary`) whole, created with mode 0600 (less if the umask says
/// so), like the result file and journal: they name the campaign and its figures.
public enum ReportFile {
    public static func write(_ bytes: [UInt8], to path: String) throws(PipelineError) {
        let file = try POSIXFile.openForReplacing(path)
        try file.write(bytes, count: bytes.count)
    }
}
