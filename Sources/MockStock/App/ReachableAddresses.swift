import Foundation
import NIOCore
import NIOPosix

/// Where other devices reach this server, for the join links a league's host hands out:
/// `PUBLIC_URL` when set; else, when the server listens beyond loopback (`HOST=0.0.0.0`
/// or an address of its own), the machine's IPv4 network addresses on its port; else none
/// (on loopback only this machine reaches it, and the web client says how to change that).
struct ReachableAddresses: Sendable {
    let bases: [String]

    init(configuration: AppConfiguration) {
        if let url = configuration.publicURL {
            bases = [url]
            return
        }
        let host = configuration.host
        guard !["127.0.0.1", "localhost", "::1"].contains(host) else {
            bases = []
            return
        }
        let port = configuration.port == 80 ? "" : ":\(configuration.port)"
        if host != "0.0.0.0" && host != "::" {
            bases = ["http://\(host)\(port)"]
            return
        }
        let devices = (try? System.enumerateDevices()) ?? []
        let addresses = devices.compactMap { device -> String? in
            guard let address = device.address, address.protocol == .inet, let ip = address.ipAddress, !ip.hasPrefix("127.") else {
                return nil
            }
            return ip
        }
        bases = Array(Set(addresses)).sorted().map { "http://\($0)\(port)" }
    }

    /// The league's join links (`/join/{code}`), one per address.
    func joinLinks(code: String) -> [String] {
        bases.map { "\($0)/join/\(code)" }
    }
}
