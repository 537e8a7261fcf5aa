import Foundation
import HeraldCore
import Testing

@Suite("UUID text without Foundation's formatter")
struct UUIDTextTests {
    @Test func lowercasedStringIsFoundationsTextInLowercase() {
        for _ in 0..<200 {
            let uuid = UUID()
            #expect(uuid.lowercasedString == uuid.uuidString.lowercased())
        }
    }

    @Test func canonicalTextRoundTripsInEitherCase() {
        for _ in 0..<200 {
            let uuid = UUID.random()
            #expect(UUID(canonical: uuid.lowercasedString) == uuid)
            #expect(UUID(canonical: uuid.uuidString) == uuid)
            #expect(UUID(uuidString: uuid.lowercasedString) == uuid)
        }
    }

    @Test func randomUUIDsAreVersionFourVariantOne() {
        expectDistinctVersionFourVariantOne(count: 1000, UUID.random)
    }

    @Test func uniqueUUIDsAreDistinctVersionFourVariantOne() {
        expectDistinctVersionFourVariantOne(count: 10_000, UUID.unique)
    }

    @Test(arguments: [
        "", "not-a-uuid", "123e4567-e89b-12d3-a456-42661417400",  // one digit short
        "123e4567-e89b-12d3-a456-4266141740000",  // one digit long
        "123e4567e89b-12d3-a456-4266141740000",  // dash missing
        "123e4567-e89b-12d3-a456_426614174000",  // wrong separator
        "123e4567-e89b-12d3-a456-42661417400g",  // not hex
        "{123e4567-e89b-12d3-a456-426614174000}",
    ])
    func malformedTextIsRejected(_ text: String) {
        #expect(UUID(canonical: text) == nil)
    }
}

private func expectDistinctVersionFourVariantOne(count: Int, _ make: () -> UUID) {
    var seen = Set<UUID>()
    for _ in 0..<count {
        let uuid = make()
        #expect(uuid.uuid.6 >> 4 == 4)
        #expect(uuid.uuid.8 >> 6 == 0b10)
        seen.insert(uuid)
    }
    #expect(seen.count == count)
}
