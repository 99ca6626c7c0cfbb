import Testing

@testable import SFAuthCore

/// A generator that returns a fixed sequence, so requests built from "random" values are exact.
struct FixedGenerator: RandomNumberGenerator {
    var value: UInt64 = 0
    mutating func next() -> UInt64 {
        value &+= 0x0101_0101_0101_0101
        return value
    }
}

@Suite struct PKCETests {
    @Test func rfc7636AppendixBVector() {
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test func generatedVerifierIsBase64URLOf256Bits() {
        var generator = SystemRandomNumberGenerator()
        let pkce = PKCE.generate(using: &generator)
        #expect(pkce.verifier.count == 43)
        #expect(pkce.verifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(!pkce.verifier.contains("~"))
        #expect(Base64URL.decode(pkce.verifier)?.count == 32)
        #expect(PKCE(verifier: pkce.verifier).challenge == pkce.challenge)
    }

    @Test func freshValuesDiffer() {
        var generator = SystemRandomNumberGenerator()
        let values = (0..<100).map { _ in RandomToken.generate(using: &generator) }
        #expect(Set(values).count == 100)
        #expect(values.allSatisfy { $0.count == 43 })
    }

    @Test(arguments: [
        ([UInt8](), ""), (Array("f".utf8), "Zg"), (Array("fo".utf8), "Zm8"), (Array("foo".utf8), "Zm9v"),
        (Array("foob".utf8), "Zm9vYg"), ([0xFB, 0xFF], "-_8"),
    ])
    func base64URLRoundTrip(bytes: [UInt8], encoded: String) {
        #expect(Base64URL.encode(bytes) == encoded)
        #expect(Base64URL.decode(encoded) == bytes)
    }

    @Test func base64DecodeAcceptsPaddingAndStandardAlphabet() {
        #expect(Base64URL.decode("Zm8=") == Array("fo".utf8))
        #expect(Base64URL.decode("+/8=") == [0xFB, 0xFF])
        #expect(Base64URL.decode("Z") == nil)
        #expect(Base64URL.decode("Zm9v!") == nil)
    }
}
