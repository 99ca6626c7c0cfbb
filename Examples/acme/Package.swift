// swift-tools-version:6.0
// acme: a small command-line tool of its own that signs its users in with SFAuth — under its own
// name everywhere (its directory, keyring items, messages and browser page say "acme", never
// "sfauth"). It depends on the SFAuth product by path, as an outside package would by URL.
import PackageDescription

let package = Package(
    name: "acme",
    dependencies: [.package(name: "sfauth", path: "../..")],
    targets: [
        .executableTarget(name: "acme", dependencies: [.product(name: "SFAuth", package: "sfauth")])
    ]
)
