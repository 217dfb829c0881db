import Foundation

/// Checks the files a run is to write before it creates or sends anything, so that a mistake in a path costs
/// nothing: no file that the run reads is written over (the same file by device and inode, whatever path names
/// it), a result file that exists is an apns-bulk result file (never a campaign or any other file, `--overwrite` or
/// not), and each output's folder exists and can be written in. Every message starts with the option and the path
/// as the user gave them.
public enum OutputPathCheck {
    /// The result file of `send`, `replay` or `validate` (`-`, standard output, is not checked), and the journal,
    /// campaign record and lock beside it: none is one of the files `inputs` names, the folder is there and
    /// writable, and an existing regular file with bytes in it reads as a result file.
    public static func checkResultFile(_ path: String, reading inputs: [String]) throws(PipelineError) {
        guard path != "-" else { return }
        let beside = [
            SendJournal.path(forResults: path), CampaignManifest.path(forResults: path), RunLock.path(forResults: path),
        ]
        for written in [path] + beside {
            guard let input = inputs.first(where: { sameFile($0, written) }) else { continue }
            let what = written == path ? "it is" : "the file beside it, \(written), is"
            throw PipelineError(
                .outputInvalid,
                "--results \(path): \(what) the input \(input): name a new file for the "
                    + "results (the input is never written over)")
        }
        try checkFolder(
            of: path, option: "--results", holds: "the result file, its journal, lock and campaign record go there")
        guard !POSIXFile.isDirectory(atPath: path) else {
            throw PipelineError(.outputInvalid, "--results \(path): is a directory: name a file in it")
        }
        // A symbolic link is refused as such when the run opens its files (never written through).
        guard !POSIXFile.isSymbolicLink(atPath: path), let size = POSIXFile.regularFileSize(atPath: path), size > 0,
            !readsAsResultFile(path)
        else { return }
        throw PipelineError(
            .outputInvalid,
            "--results \(path): the file exists and is not an apns-bulk result file: "
                + "name a new file for the results (only a result file is ever replaced)")
    }

    /// `validate --results`: as `checkResultFile`, and never the result file of a campaign (one with a campaign
    /// record beside it), which `validate`, writing its file anew, would replace.
    public static func checkValidateResultFile(_ path: String, reading inputs: [String]) throws(PipelineError) {
        try checkResultFile(path, reading: inputs)
        let record = CampaignManifest.path(forResults: path)
        guard path != "-", (POSIXFile.regularFileSize(atPath: path) ?? 0) > 0, POSIXFile.exists(record) else { return }
        throw PipelineError(
            .outputInvalid,
            "--results \(path): it holds the results of a campaign (\(record) is "
                + "beside it): name a new file for validate's lines")
    }

    /// An output written at the end of a run (`--summary`, `--metrics`, `--report`): not one of `inputs`, not a
    /// directory, a regular file there writable, and its folder there and writable when a file is to be made in it
    /// (the path names nothing yet, or `renamedIntoPlace`, as `--metrics` is, and the path is no symbolic link). A
    /// device or a FIFO (`/dev/null`, `/dev/stdout`) is written in place.
    public static func checkOutput(
        _ path: String, option: String, reading inputs: [String], renamedIntoPlace: Bool = false
    ) throws(PipelineError) {
        if let input = inputs.first(where: { sameFile($0, path) }) {
            throw PipelineError(.outputInvalid, "\(option) \(path): it is the input \(input): name another file")
        }
        guard !POSIXFile.isDirectory(atPath: path) else {
            throw PipelineError(.outputInvalid, "\(option) \(path): is a directory: name a file in it")
        }
        guard POSIXFile.exists(path) else { return try checkFolder(of: path, option: option, holds: nil) }
        guard POSIXFile.regularFileSize(atPath: path) != nil else { return }  // a device, a FIFO
        if access(path, W_OK) != 0 {
            throw PipelineError(
                .openFailed, "\(option) \(path): cannot be written: \(String(cString: strerror(errno)))")
        }
        if renamedIntoPlace, !POSIXFile.isSymbolicLink(atPath: path) {
            try checkFolder(of: path, option: option, holds: nil)
        }
    }

    /// Two outputs naming one file (`--summary s.json --report s.json`): the second would write over the first.
    public static func checkDistinct(_ outputs: [(option: String, path: String)]) throws(PipelineError) {
        for (index, output) in outputs.enumerated() where output.path != "-" {
            for earlier in outputs[..<index] where earlier.path == output.path || sameFile(earlier.path, output.path) {
                guard POSIXFile.regularFileSize(atPath: output.path) != nil || !POSIXFile.exists(output.path) else {
                    continue
                }
                throw PipelineError(
                    .outputInvalid,
                    "\(output.option) \(output.path): \(earlier.option) writes the "
                        + "same file: name another file")
            }
        }
    }

    /// The folder `path` goes in is a folder this process can create files in; else `.openFailed` naming it.
    static func checkFolder(of path: String, option: String?, holds: String?) throws(PipelineError) {
        let folder = DuplicateFilter.scratchDirectory(forResults: path)
        let named = option.map { "\($0) \(path)" } ?? path
        guard POSIXFile.isDirectory(atPath: folder) else {
            throw PipelineError(.openFailed, "\(named): the folder \(folder) does not exist")
        }
        guard POSIXFile.isWritableDirectory(folder) else {
            throw PipelineError(
                .openFailed, "\(named): cannot write in the folder \(folder)" + (holds.map { " (\($0))" } ?? ""))
        }
    }

    /// Whether the file at `path` is one apns-bulk wrote: its first line reads as a result line, or it holds one
    /// line torn by a crash beside its campaign record.
    static func readsAsResultFile(_ path: String) -> Bool {
        do {
            let reader = try ResultReader(path: path)
            switch try reader.nextLine() {
            case .success?: return true
            case .failure?: return false
            case nil: return POSIXFile.exists(CampaignManifest.path(forResults: path))
            }
        } catch {
            return false
        }
    }

    /// Whether two paths name one existing file (the same device and inode).
    static func sameFile(_ first: String, _ second: String) -> Bool {
        guard first != "-", second != "-" else { return false }
        var one = stat()
        var other = stat()
        guard stat(first, &one) == 0, stat(second, &other) == 0 else { return false }
        return one.st_dev == other.st_dev && one.st_ino == other.st_ino
    }
}
