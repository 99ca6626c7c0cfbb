// swift-tools-version:6.0
import PackageDescription

// Linux only (glibc): the adapters use Glibc, /proc, libsecret over D-Bus and xdg-open, and the front
// end is a static glibc executable. No other platform is declared because none builds.
let package = Package(
    name: "sfauth",
    products: [
        .library(name: "SFAuth", targets: ["SFAuth"]),
        .executable(name: "sfauth", targets: ["sfauth"]),
        .executable(name: "sfauth-main", targets: ["sfauth-main"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // JOSE: ID token signatures against a JWKS (RS256, ES256, ...) and JWT bearer assertions.
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // `swift package generate-documentation` (scripts/docs); a build-time plugin only, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // libcurl's headers plus typed wrappers around its variadic functions. The library itself is
        // loaded with dlopen on first use, so processes that make no HTTP request (`sfauth token`
        // with a valid token) never pay the 6–8 ms it costs to load libcurl and its dependencies.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),

        // libsecret (the Secret Service keyring over D-Bus), also loaded with dlopen on first use, so
        // nothing pays for GLib and D-Bus unless it touches the keyring.
        .target(name: "CSecret", linkerSettings: [.linkedLibrary("dl")]),

        // The values every program shares — the account record and its file format, the store's
        // rules, errors, environment settings — on FoundationEssentials alone, so the front end can
        // be built from them without the rest. Pure: no I/O.
        .target(name: "SFAuthModel"),

        // The credentials directory on disk, for both programs: opened once per operation, trusted
        // on that descriptor and every file reached through it; the name index; and the one
        // stored-token lookup the front end answers with and the main program reuses first.
        // FoundationEssentials and Glibc only, so the front end can link it.
        .target(name: "SFAuthStore", dependencies: ["SFAuthModel"]),

        // The formats other tools call sfauth in — git's credential helper protocol, client-go's
        // ExecCredential, the environment and start of `sfauth exec`'s command — for both programs,
        // on FoundationEssentials and Glibc alone.
        .target(name: "CredentialProtocols", dependencies: ["SFAuthModel"]),

        // Pure protocol logic: no sockets, files, processes or clock reads.
        .target(
            name: "SFAuthCore",
            dependencies: ["SFAuthModel", .product(name: "Crypto", package: "swift-crypto")]
        ),

        // The coordinator, its delegate, and the Linux adapters (HTTP, listener, browser, storage).
        .target(
            name: "SFAuth",
            dependencies: ["SFAuthCore", "SFAuthStore", "CCurl", "CSecret", .product(name: "JWTKit", package: "jwt-kit")]
        ),

        // What only the command needs, kept out of the library and tested in Swift: the configuration
        // file and its profiles, the words sfauth says, the shapes of its output.
        .target(name: "SFAuthCLI", dependencies: ["SFAuth", "SFAuthStore", "CredentialProtocols"]),

        // The main program: one small file per subcommand. Installed as libexec/sfauth/sfauth-main;
        // people run it through the front end below.
        .executableTarget(
            name: "sfauth-main",
            dependencies: ["SFAuthCLI", "CredentialProtocols", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),

        // The `sfauth` people run: answers the credential hot paths (`token`, `kube-credential`,
        // `git-credential get`, `exec`) from a usable stored token by itself and hands every other
        // command to sfauth-main (as git hands `git foo` to `git-foo`). Fully static and built on
        // the three FoundationEssentials-only targets, so it starts as fast as a process can: no
        // dynamic loader work, no relocations, no Foundation beyond FoundationEssentials.
        .executableTarget(
            name: "sfauth",
            dependencies: ["SFAuthModel", "SFAuthStore", "CredentialProtocols"],
            // (FoundationEssentials' own dependencies are not linked automatically in a static executable.)
            linkerSettings: [
                .unsafeFlags(["-static-executable"]), .linkedLibrary("_FoundationCollections"),
                .linkedLibrary("_FoundationCShims"), .linkedLibrary("swiftSynchronization"),
            ]
        ),

        // libFuzzer targets for every parser of outside data; a plain build is their corpus replayer
        // (`sfauth-fuzz replay TARGET FILE|DIR…`). `scripts/fuzz` builds and runs the fuzzers.
        .executableTarget(name: "sfauth-fuzz", dependencies: ["SFAuth", "SFAuthCLI"], path: "Fuzz/Sources/sfauth-fuzz"),

        .testTarget(name: "SFAuthModelTests", dependencies: ["SFAuthModel"]),
        .testTarget(name: "SFAuthStoreTests", dependencies: ["SFAuthStore"]),
        .testTarget(name: "CredentialProtocolsTests", dependencies: ["CredentialProtocols"]),
        .testTarget(name: "SFAuthCoreTests", dependencies: ["SFAuthCore"]),
        .testTarget(name: "SFAuthCLITests", dependencies: ["SFAuthCLI"]),
        .testTarget(
            name: "SFAuthTests",
            dependencies: ["SFAuth", .product(name: "JWTKit", package: "jwt-kit")],
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["SFAuth"]),
    ]
)
