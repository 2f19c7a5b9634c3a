@testable import DocRouteProtocol
import DocRouteTestSupport
import Foundation
import Testing

/// The protocol's own JSON reader must read every line as `JSONDecoder` read it before (into a
/// ``JSONValue``), and refuse what it refused.
@Suite struct JSONParserTests {
    /// What `JSONDecoder` makes of `text`, or nil where it throws.
    static func decoded(_ text: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text))
    }

    static func parsed(_ text: [UInt8]) -> JSONValue? {
        try? JSONParser.parse(text)
    }

    static let samples: [String] = [
        #"{"type":"ack","deliveryID":"5C3A0E0B-7F7B-4B36-9D6B-0E0F5B1C2D3E","handled":true}"#,
        #"{"type":"open","id":"2","url":"file:///srv/shared/1abc.pdb","annotation":{"a":[1,2.5,-3e2,null,false]}}"#,
        #"  {"a" : 1 , "b":[ ] , "c":{ }}  "#, "{}", "[]", "[[[]]]", "null", "true", "false", "0", "-0", "12",
        "1.0", "1.5", "-1.25e-3", "1e2", "1E+2", "2e-1", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1e400", "-1e400",
        "0.1e1", "-0.0", "3.0e0",
        #""plain""#, #""\"\\\/\b\f\n\r\t""#, #""\u00e9\u20AC\ud83d\ude00""#, #""\u0000""#, #""é€😀""#,
        #"{"k":1,"k":2}"#, #"{"":""}"#,
        // Refused:
        "", " ", "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, "[1,,]", #"{,}"#, "[,]", #"{"a"}"#, #"{a:1}"#, "01", "-", "1.", ".5", "1e", "1e+",
        "+1", "0x10", "NaN", "Infinity", "tru", "nul", "truex", "[1] [2]", #""abc"#, #""\x""#, #""\u12""#,
        #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#, "\"a\u{01}b\"", "\"tab\there\"",
        #"{"a":1}x"#, "[1 2]", #"{"a" 1}"#, "\u{00A0}1",
    ]

    @Test func readsEachSampleAsJSONDecoderDid() {
        for sample in Self.samples {
            let text = Array(sample.utf8)
            #expect(Self.parsed(text) == Self.decoded(text), "\(sample)")
        }
    }

    @Test func readsGeneratedDocumentsAsJSONDecoderDid() {
        var random = SplitMix(seed: 0x15_0A7E)
        for round in 0..<3_000 {
            var text = Array(Self.document(depth: 0, random: &random).utf8)
            // Every third document is damaged: a byte changed, or the end cut off.
            if round % 3 == 1, !text.isEmpty {
                text[Int.random(in: 0..<text.count, using: &random)] = Self.damage.randomElement(using: &random)!
            } else if round % 3 == 2, !text.isEmpty {
                text.removeLast(Int.random(in: 0...text.count, using: &random))
            }
            guard String(validating: text, as: UTF8.self) != nil else { continue }
            #expect(Self.parsed(text) == Self.decoded(text), "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test func refusesNestingDeeperThanItsLimit() {
        let deep = String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(deep.utf8)) }
        let allowed = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? JSONParser.parse(Array(allowed.utf8))) != nil)
    }

    @Test func aStoredAnnotationReadsBackAsAValue() {
        #expect(JSONValue(parsingJSON: #"{"k":["v",2,true]}"#) == .object(["k": .array([.string("v"), .integer(2), .bool(true)])]))
        #expect(JSONValue(parsingJSON: #"{"k":"#) == nil)
    }

    @Test func aBadLineSaysItIsNotJSON() {
        #expect(throws: ProtocolError.self) { try ClientMessage(decoding: Array(#"{"type":"ack","handled":tru}"#.utf8)) }
    }

    static let damage: [UInt8] = Array(#"{}[],:"\ 0123456789.eE+-tfnaxu"#.utf8) + [0x00, 0x01, 0x7F]

    static let pieces = ["", "a", "é", "€", "😀", "\\\"", "\\\\", "\\/", "\\n", "\\t", "\\u0041", "\\u00E9", "\\uD83D\\uDE00",
                         "\\uDE00", "\\uD83D", " ", "deliveryID", "\\u0000", "\\b\\f\\r"]
    static let numbers = ["0", "-0", "7", "-42", "3.25", "1.0", "-2.50", "1e3", "2E-2", "6.02e23", "1e-400", "9007199254740993",
                          "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1.7976931348623157e308", "00", "1.e2"]

    static func document(depth: Int, random: inout SplitMix) -> String {
        let choice = depth > 3 ? Int.random(in: 0..<5, using: &random) : Int.random(in: 0..<7, using: &random)
        switch choice {
        case 0: return ["null", "true", "false"].randomElement(using: &random)!
        case 1, 2: return numbers.randomElement(using: &random)!
        case 3, 4: return string(random: &random)
        case 5:
            let count = Int.random(in: 0..<4, using: &random)
            let elements = (0..<count).map { _ in document(depth: depth + 1, random: &random) }
            return "[" + elements.joined(separator: Bool.random(using: &random) ? "," : " , ") + "]"
        default:
            let count = Int.random(in: 0..<4, using: &random)
            let members = (0..<count).map { _ in string(random: &random) + ":" + document(depth: depth + 1, random: &random) }
            return "{" + members.joined(separator: ",") + "}"
        }
    }

    static func string(random: inout SplitMix) -> String {
        let count = Int.random(in: 0..<4, using: &random)
        return "\"" + (0..<count).map { _ in pieces.randomElement(using: &random)! }.joined() + "\""
    }
}
