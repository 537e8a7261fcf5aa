import HeraldCore
import Testing

@Suite struct SecretTests {
    /// Random bytes come eight to a draw; every length still gets exactly its bytes.
    @Test func randomTokensHaveTheirShapeAndDiffer() {
        for count in 0...20 {
            let token = RandomToken.hex(byteCount: count)
            #expect(token.utf8.count == 2 * count)
            #expect(Hex.decode(token)?.count == count)
        }
        let tokens = (0..<1000).map { _ in RandomToken.hex(byteCount: 12) }
        #expect(Set(tokens).count == tokens.count)
    }

    @Test func secretHashMatchesOnlyTheSecret() {
        let stored = SecretHash.digest("s3cret")
        #expect(SecretHash.matches("s3cret", stored: stored))
        #expect(!SecretHash.matches("s3cret ", stored: stored))
        #expect(!SecretHash.matches("", stored: stored))
    }

    @Test func sealedSecretsOpenWithTheSameKeyAndContext() throws {
        let sealer = try CredentialSealer(base64Key: CredentialSealer.generateBase64Key())
        let sealed = try sealer.seal(Array("private key".utf8), context: "app-1")
        #expect(!sealed.combined.contains(subsequence: Array("private key".utf8)))
        #expect(try sealer.open(sealed, context: "app-1") == Array("private key".utf8))
    }

    @Test func sealedSecretsDoNotOpenForAnotherApp() throws {
        let sealer = try CredentialSealer(keyBytes: Array(repeating: 1, count: 32))
        let sealed = try sealer.seal(Array("k".utf8), context: "app-1")
        #expect(throws: CredentialSealerError.corrupt) { try sealer.open(sealed, context: "app-2") }
    }

    @Test func aDifferentKeyIsReportedByItsID() throws {
        let one = try CredentialSealer(keyBytes: Array(repeating: 1, count: 32))
        let two = try CredentialSealer(keyBytes: Array(repeating: 2, count: 32))
        let sealed = try one.seal(Array("k".utf8), context: "a")
        #expect(throws: CredentialSealerError.wrongKey(sealedWith: one.keyID, configured: two.keyID)) {
            try two.open(sealed, context: "a")
        }
    }

    @Test func keysMustBe32Bytes() {
        #expect(throws: HeraldError.self) { try CredentialSealer(keyBytes: [1, 2, 3]) }
        #expect(throws: HeraldError.self) { try CredentialSealer(base64Key: "not base64!") }
    }

    @Test func hexRoundTrips() {
        #expect(Hex.encode([0x00, 0xab, 0xff]) == "00abff")
        #expect(Hex.decode("00ABff") == [0x00, 0xab, 0xff])
        #expect(Hex.decode("0") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}

extension Array where Element: Equatable {
    func contains(subsequence: [Element]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
