import DocRouteProtocol
import Foundation
import Testing

@Suite struct PropertyListValueTests {
    @Test func codableRoundTripThroughJSON() throws {
        let annotation: PropertyListValue = [
            "mailbox": "Mail", "size": 5120, "ratio": 0.5, "seen": true,
            "to": ["a@example.com", "b@example.com"], "headers": ["Subject": "Molecule"],
        ]
        let data = try JSONEncoder().encode(annotation)
        #expect(try JSONDecoder().decode(PropertyListValue.self, from: data) == annotation)
    }

    @Test func nullIsRejectedAnywhere() {
        for json in ["null", "[1,null]", #"{"a":{"b":null}}"#] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(PropertyListValue.self, from: Data(json.utf8))
            }
        }
    }

    @Test func convertsFromJSONValueOnlyWithoutNull() {
        #expect(PropertyListValue(JSONValue.object(["a": [1, "x"]])) == ["a": [1, "x"]])
        #expect(PropertyListValue(JSONValue.array([1, nil])) == nil)
    }

    @Test func nonFiniteRealsStillMakeValidJSON() throws {
        let event = DocumentEvent(deliveryID: "d", urlString: "x:y", isFileURL: false, annotation: ["r": .real(.infinity)])
        let line = event.openURLMessage().encodedLine()
        #expect(text(line).contains(#""annotation":{"r":"Infinity"}"#))
        #expect(try JSONSerialization.jsonObject(with: Data(line)) is [String: Any])
    }
}
