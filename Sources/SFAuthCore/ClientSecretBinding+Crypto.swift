import Crypto

extension ClientSecretBinding {
    /// The binding of `secret`, under a fresh random salt.
    package init<Generator: RandomNumberGenerator>(secret: String, using generator: inout Generator) {
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.init(salt: Base64URL.encode(salt), digest: Self.digest(of: secret, salt: salt))
    }

    /// The binding of `secret`, under a fresh salt from the system's generator.
    package init(secret: String) {
        var generator = SystemRandomNumberGenerator()
        self.init(secret: secret, using: &generator)
    }

    /// Whether `secret` is the one this binding was made from (compared in constant time).
    package func matches(_ secret: String) -> Bool {
        guard let salt = Base64URL.decode(salt) else { return false }
        let expected = Array(digest.utf8)
        let actual = Array(Self.digest(of: secret, salt: salt).utf8)
        guard expected.count == actual.count else { return false }
        return zip(expected, actual).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func digest(of secret: String, salt: [UInt8]) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(secret.utf8), using: SymmetricKey(data: salt))
        return Base64URL.encode(Array(code))
    }
}

extension OAuthCredentials {
    /// Whether a client secret given now may be sent with this account's requests: it is the one
    /// the account signed in with — or the account was signed in before sfauth kept that (no
    /// binding), and the secret is then bound at its first use.
    package func accepts(clientSecret: String) -> Bool {
        clientSecretBinding?.matches(clientSecret) ?? true
    }
}
