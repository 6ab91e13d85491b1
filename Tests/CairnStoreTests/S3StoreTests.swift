import CairnCore
import CairnS3
import CairnStore
import CairnTesting
import Foundation
import Testing

/// What only the S3 store has: its settings by the AWS conventions, and clear, secret-free failures from a real
/// S3 server (the suite's SeaweedFS).
@Suite struct S3StoreTests {
    @Test func refusedCredentialsSayWhatFailedAndCarryNoSecret() async throws {
        var environment = try TestS3.environment()
        let secret = "not-the-secret-" + UUID().uuidString
        environment["AWS_SECRET_ACCESS_KEY"] = secret
        let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: environment)
        let store = try S3Store(settings: settings, retry: RetryPolicy(attempts: 1))
        defer { Task { await store.close() } }
        let sources = try SourceFiles()
        let file = try sources.file([1])
        let key = try ObjectKey("a")
        do throws(StoreError) {
            _ = try await store.put(key, fromFile: file)
            Issue.record("a put with a wrong secret was accepted")
        } catch {
            #expect(error.kind == .credentials)
            #expect(error.category == .auth)
            #expect(error.reason.contains("refused the credentials"))
            #expect(!error.description.contains(secret))
            #expect(!error.description.contains(settings.credentials.accessKeyID))
        }
    }

    @Test func aMissingBucketIsNamedAsSuch() async throws {
        let settings = try S3Settings.resolve("s3://no-such-bucket-\(UInt32.random(in: 0 ... .max))/x",
                                              environment: try TestS3.environment())
        let store = try S3Store(settings: settings, retry: RetryPolicy(attempts: 1))
        defer { Task { await store.close() } }
        let sources = try SourceFiles()
        let file = try sources.file([1])
        let key = try ObjectKey("a")
        do throws(StoreError) {
            _ = try await store.put(key, fromFile: file)
            Issue.record("a put into a missing bucket was accepted")
        } catch {
            #expect(error.kind == .missingStore, "\(error)")
            #expect(error.description.contains("bucket does not exist"))
        }
    }

    @Test func aStoreThatDoesNotAnswerIsANetworkFailureAfterRetries() async throws {
        var environment = try TestS3.environment()
        environment["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:9"  // the discard port: nothing listens
        let settings = try S3Settings.resolve("s3://cairn-test/x", environment: environment)
        let store = try S3Store(settings: settings, retry: RetryPolicy(attempts: 3, base: .milliseconds(1)),
                                connectTimeout: .milliseconds(500))
        defer { Task { await store.close() } }
        await #expect { _ = try await store.size(of: try ObjectKey("a")) } throws: { error in
            (error as? StoreError)?.kind == .network && (error as? StoreError)?.category == .network
        }
    }

    @Test func theStoreChecksTheSHA1ItIsSentSoBytesThatChangedAreNeverStored() async throws {
        let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: try TestS3.environment())
        let store = try S3Store(settings: settings, retry: RetryPolicy(attempts: 1))
        defer { Task { await store.close() } }
        // SeaweedFS checks `x-amz-checksum-sha1`: the probe's wrong one is refused.
        #expect(try await store.checksSHA1())
        let bytes = Array("a photo's bytes, sent unsigned with their SHA1".utf8)
        let sha1 = try #require(Checksum(hex: String(decoding: try ExternalTool.run(["sha1sum"], input: Data(bytes)).prefix(40),
                                                     as: UTF8.self)))
        let other = try #require(Checksum(bytes: [UInt8](repeating: 7, count: Checksum.byteCount)))
        let key = try ObjectKey("originals/ab/photo.jpg")
        await #expect { _ = try await store.put(key, bytes: bytes, sha1: other) } throws: { error in
            (error as? StoreError)?.kind == .contentMismatch
        }
        #expect(try await store.size(of: key) == nil)
        #expect(try await store.put(key, bytes: bytes, sha1: sha1) == .created)
        #expect(try await store.read(key, range: nil) == bytes)
        #expect(try await store.put(key, bytes: bytes, sha1: sha1) == .alreadyThere)
        // The probe left nothing behind.
        #expect(try await store.list(prefix: "", after: nil, limit: 10).map(\.key) == [key])
    }

    @Test func aBigObjectGoesUpInPartsAndAKilledUploadResumesWithThePartsItLacks() async throws {
        let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: try TestS3.environment())
        let sources = try SourceFiles()
        let bytes = distinctBytes(13 << 20, seed: 3)  // three parts of 5 MiB: 5, 5 and 3
        let file = try sources.file(bytes)
        let key = try ObjectKey("originals/99/big.mov")

        let first = try S3Store(settings: settings, partSize: 5 << 20, partsInFlight: 1)
        first.failParts { $0 == 3 ? StoreError(.network, "killed before part 3") : nil }
        await #expect(throws: StoreError.self) { _ = try await first.put(key, fromFile: file) }
        #expect(first.partsUploaded == 2)
        #expect(try await first.size(of: key) == nil)
        #expect(try await first.unfinishedUploads(prefix: "originals/").count == 1)
        await first.close()

        let second = try S3Store(settings: settings, partSize: 5 << 20)
        #expect(try await second.put(key, fromFile: file) == .created)
        #expect(second.partsUploaded == 1)  // only the part the store lacked
        #expect(try await second.size(of: key) == Int64(bytes.count))
        #expect(try await second.read(key, range: (5 << 20) - 10 ..< (5 << 20) + 10)
                    == Array(bytes[(5 << 20) - 10 ..< (5 << 20) + 10]))
        #expect(try await second.read(key, range: nil) == bytes)
        #expect(try await second.unfinishedUploads(prefix: "originals/").isEmpty)
        // Once there, the object is not uploaded again.
        #expect(try await second.put(key, fromFile: file) == .alreadyThere)
        #expect(second.partsUploaded == 1)
        await second.close()
    }

    @Test func abandonedUploadsAreAbortedOnlyOnceOldEnough() async throws {
        let settings = try S3Settings.resolve(try TestS3.freshLocation(), environment: try TestS3.environment())
        let sources = try SourceFiles()
        let file = try sources.file(distinctBytes(6 << 20, seed: 4))
        let store = try S3Store(settings: settings, partSize: 5 << 20)
        store.failParts { _ in StoreError(.network, "killed before any part") }
        await #expect(throws: StoreError.self) { _ = try await store.put(try ObjectKey("derived/x.mp4"), fromFile: file) }
        // Through the store seam, as a run calls it: an upload begun now is left for the next run to resume...
        let seam: any ObjectStore = store
        #expect(try await seam.clearAbandonedWrites(now: Date()) == 0)
        #expect(try await seam.clearAbandonedWrites(now: Date().addingTimeInterval(6 * 86_400)) == 0)
        #expect(try await store.unfinishedUploads(prefix: "").count == 1)
        // ...and aborted once it is over a week old.
        #expect(try await seam.clearAbandonedWrites(now: Date().addingTimeInterval(8 * 86_400)) == 1)
        #expect(try await store.unfinishedUploads(prefix: "").isEmpty)
        // A store that keeps no unfinished write clears none.
        let folder = try TemporaryDirectory()
        #expect(try await FolderStore(root: folder.path).clearAbandonedWrites(now: Date().addingTimeInterval(8 * 86_400)) == 0)
        await store.close()
    }

    @Test func settingsFollowTheAWSConventions() throws {
        let folder = try TemporaryDirectory()
        let credentials = try folder.write(Data("""
            [default]
            aws_access_key_id = DEFAULTKEY
            aws_secret_access_key = defaultsecret
            [nas]
            aws_access_key_id = NASKEY
            aws_secret_access_key = nassecret
            aws_session_token = nastoken
            """.utf8), to: ".aws/credentials")
        _ = credentials
        _ = try folder.write(Data("""
            [default]
            region = eu-west-3
            [profile nas]
            region = home-1
            endpoint_url = https://minio.lan:9000
            ca_bundle = /etc/nas-ca.pem
            s3 =
                addressing_style = virtual
            """.utf8), to: ".aws/config")
        let home = ["HOME": folder.path]

        let plain = try S3Settings.resolve("s3://photos", environment: home)
        #expect(plain.location.bucket == "photos" && plain.location.prefix == "")
        #expect(plain.region == "eu-west-3")
        #expect(plain.endpoint.absoluteString == "https://s3.eu-west-3.amazonaws.com")
        #expect(plain.addressing == .virtual)
        #expect(plain.credentials.accessKeyID == "DEFAULTKEY")

        let nas = try S3Settings.resolve("s3://photos/library/", environment: home.merging(["AWS_PROFILE": "nas"]) { $1 })
        #expect(nas.location.prefix == "library/")
        #expect(nas.region == "home-1")
        #expect(nas.endpoint.absoluteString == "https://minio.lan:9000")
        #expect(nas.credentials.accessKeyID == "NASKEY" && nas.credentials.sessionToken == "nastoken")
        #expect(nas.certificateAuthorities == "/etc/nas-ca.pem")
        #expect(nas.addressing == .virtual)

        // The environment wins over the files; another endpoint than AWS's is addressed by path.
        let env = try S3Settings.resolve("s3://photos/x", environment: home.merging([
            "AWS_ACCESS_KEY_ID": "ENVKEY", "AWS_SECRET_ACCESS_KEY": "envsecret", "AWS_REGION": "us-west-2",
            "AWS_ENDPOINT_URL": "http://generic:1", "AWS_ENDPOINT_URL_S3": "http://seaweed:8333",
        ]) { $1 })
        #expect(env.credentials.accessKeyID == "ENVKEY")
        #expect(env.region == "us-west-2")
        #expect(env.endpoint.absoluteString == "http://seaweed:8333")
        #expect(env.addressing == .path)
        #expect(env.location.prefix == "x/")
        // A secret never prints.
        #expect("\(env.credentials.secretAccessKey)" == "***")
        #expect(!String(describing: env).contains("envsecret"))

        #expect(throws: S3SettingsError.self) { try S3Settings.resolve("photos", environment: home) }
        #expect(throws: S3SettingsError.self) { try S3Settings.resolve("s3://Bad_Bucket", environment: home) }
        let empty = try TemporaryDirectory()
        do {
            _ = try S3Settings.resolve("s3://photos", environment: ["HOME": empty.path])
            Issue.record("settings without credentials resolved")
        } catch {
            #expect(error.description.contains("no S3 credentials"))
        }
    }
}
