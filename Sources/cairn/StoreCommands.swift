import ArgumentParser
import CairnCore
import CairnLibrary
import CairnS3
import CairnStore
import Foundation

/// `cairn store`: the library's files in another store.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Copy or move a library's files to an S3-compatible object store.",
        subcommands: [StoreCopyCommand.self, StoreMoveCommand.self]
    )
}

/// `cairn store copy --to s3://BUCKET/PREFIX`.
struct StoreCopyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy the library's originals, sidecars, derived files and tapes to an S3-compatible store.",
        discussion: """
            Every file under originals/, sidecars/, derived/ and tapes/ of the library goes to the same path under \
            PREFIX in the bucket; what the store already holds with the same size is left alone, so a copy that \
            was interrupted is resumed by running it again, and a copy of an unchanged library sends no file. \
            Each upload carries a checksum the store checks before it keeps the object (an original's or \
            sidecar's the SHA1 its name is, so a file damaged on the disk is refused, not copied). The trash, the catalog and the run logs are not copied. The library's folder is \
            only read and stays the library: the copy is a backup (`cairn store move` moves the library onto the \
            store).

            The store is found as the AWS CLI finds it: the endpoint from AWS_ENDPOINT_URL_S3 or \
            AWS_ENDPOINT_URL (else AWS for the region), the region from AWS_REGION, the key pair from \
            AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN), else from the AWS_PROFILE \
            profile (default: default) of ~/.aws/credentials and ~/.aws/config; AWS_CA_BUNDLE for a store with a \
            certificate authority of its own. Not supported: SSO, credential_process, instance metadata. No key \
            is ever printed.

            Exit status: 0 when every file is in the store, 3 when some could not be copied (each is named with \
            its reason), 1 when the store could not be used at all.
            """
    )

    @OptionGroup var target: StoreTargetOptions
    @OptionGroup var library: LibraryOption

    func run() async throws {
        let root = try library.existingRoot()
        let settings: S3Settings
        do {
            settings = try S3Settings.resolve(target.destination)
        } catch {
            throw Output.fail(error.description)
        }
        let store = try S3Store(settings: settings)
        var copy = StoreCopy(source: FolderStore(root: root), destination: store)
        copy.width = target.width
        let target = settings.location.description
        let shown = Locked(0)
        copy.onPage = { report in
            // A line every 10,000 files: a million-file library says so a hundred times.
            let done = report.copied + report.present + report.failures.count
            let crossed = shown.withLock { last -> Bool in
                guard done / 10_000 > last / 10_000 else { return false }
                last = done
                return true
            }
            guard crossed else { return }
            Output.line("… \(report.copied) copied, \(report.present) already in \(target), \(report.failures.count) failed")
        }
        let report: StoreCopy.Report
        do {
            report = try await copy.run(prefixes: ["originals/", "sidecars/", "derived/", "tapes/"])
        } catch {
            await store.close()
            throw Output.fail("the copy to \(target) stopped: \(error)")
        }
        await store.close()
        let megabytes = String(format: "%.1f", Double(report.copiedBytes) / 1_048_576)
        Output.line("Copied \(report.copied) file(s) (\(megabytes) MiB) to \(target); \(report.present) were there already.")
        for failure in report.failures { Output.error("not copied: \(failure)") }
        if !report.failures.isEmpty { throw ExitCode(ExitStatus.someFilesFailed.rawValue) }
    }
}

/// `--to` and `--uploads`: where `cairn store copy` and `move` send a library's files, and how many at once.
struct StoreTargetOptions: ParsableArguments {
    @Option(name: .customLong("to"), help: "The store to send the library's files to, as s3://BUCKET or s3://BUCKET/PREFIX.")
    var destination: String

    @Option(name: .customLong("uploads"), help: "How many files go up at once (default 8).")
    var width = 8

    func validate() throws {
        do { _ = try S3Location(parsing: destination) } catch { throw ValidationError(error.description) }
        guard (1 ... 64).contains(width) else { throw ValidationError("--uploads must be between 1 and 64.") }
    }
}
