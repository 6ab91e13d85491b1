import Foundation

/// The command line. Parsed by hand: the target's dependencies are the HTTP stack only.
struct Options {
    var data: String
    var port = 0
    var serverVersion = "3.0.3"
    var users: [User] = []
    var traffic: String?
    var faults = FaultProfile()

    static let usage = """
        usage: immich-double --data DIR [--port 0] [--server-version 3.0.3] [--user KEY=NAME]...
                             [--key-permissions KEY=PERMISSION,...]... [--traffic FILE] [--faults JSON|@FILE]
          Serves Immich's API (the operations cairn uses) on 127.0.0.1, keeping uploads under DIR/files.
          Prints "immich-double listening on http://127.0.0.1:PORT" once ready. Without --user: test-key=tester.
          A key's permissions are `all` unless --key-permissions names them (Immich's names: asset.upload, ...).
          Test endpoints: GET /_double/state, GET and POST /_double/faults.
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var data: String?
        var options = Options(data: "")
        var keyPermissions: [String: [String]] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            // Both "--name value" and "--name=value".
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inline { return inline }
                guard let next = rest.popFirst() else { throw DoubleFailure("\(name) needs a value") }
                return next
            }
            switch name {
            case "--data": data = try value()
            case "--port":
                let text = try value()
                guard let port = Int(text), (0...65535).contains(port) else { throw DoubleFailure("bad --port \(text)") }
                options.port = port
            case "--server-version": options.serverVersion = try value()
            case "--user":
                let text = try value()
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex
                else { throw DoubleFailure("--user wants KEY=NAME, got \(text)") }
                options.users.append(User(key: String(text[..<equals]), name: String(text[text.index(after: equals)...])))
            case "--key-permissions":
                let text = try value()
                guard let equals = text.firstIndex(of: "="), equals != text.startIndex
                else { throw DoubleFailure("--key-permissions wants KEY=PERMISSION,..., got \(text)") }
                keyPermissions[String(text[..<equals])] = text[text.index(after: equals)...].split(separator: ",").map(String.init)
            case "--traffic": options.traffic = try value()
            case "--faults":
                var text = try value()
                if text.hasPrefix("@") { text = try String(contentsOfFile: String(text.dropFirst()), encoding: .utf8) }
                do { options.faults = try JSONDecoder().decode(FaultProfile.self, from: Data(text.utf8)) } catch {
                    throw DoubleFailure("bad --faults JSON: \(error)")
                }
            case "--help", "-h":
                print(usage)
                exit(0)
            default: throw DoubleFailure("unknown argument \(argument)")
            }
        }
        guard let data else { throw DoubleFailure("--data DIR is required") }
        options.data = data
        if options.users.isEmpty { options.users = [User(key: "test-key", name: "tester")] }
        for index in options.users.indices {
            if let permissions = keyPermissions[options.users[index].key] { options.users[index].permissions = permissions }
        }
        return options
    }
}
