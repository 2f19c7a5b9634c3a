@testable import DocRouteConfiguration
@testable import DocRouteIntake
import DocRouteMail
@testable import DocRouteMaildir
@testable import DocRoutePlatform
import Testing

@Suite struct MaildirNameTests {
    @Test(arguments: [
        ("&AOk-t&AOk-", "été"),
        ("&AMk-t&AOk-", "Été"),
        ("Work.Reports", "Work.Reports"),
        ("&-", "&"),
        ("Tom &- Jerry", "Tom & Jerry"),
        ("&ZeVnLIqe-", "日本語"),
        ("~peter/mail/&U,BTFw-/&ZeVnLIqe-", "~peter/mail/台北/日本語"),
        ("&2D3eAA-", "😀"),
    ])
    func modifiedUTF7(_ encoded: String, _ decoded: String) {
        #expect(ModifiedUTF7.decode(Array(encoded.utf8)) == decoded)
    }

    @Test(arguments: ["&AOk", "&AOk!", "&Jjo-x&", "&2D0-", "caf\u{E9}", "&AOkA-"])
    func invalidModifiedUTF7IsRefused(_ encoded: String) {
        #expect(ModifiedUTF7.decode(Array(encoded.utf8)) == nil)
    }

    @Test func folderNames() {
        #expect(MaildirFolderName.mailbox(forFolder: ".Sent") == "Sent")
        #expect(MaildirFolderName.mailbox(forFolder: ".A.B") == "A.B")
        #expect(MaildirFolderName.mailbox(forFolder: ".&AMk-t&AOk-") == "Été")
        #expect(MaildirFolderName.mailbox(forFolder: ".&AOk") == "&AOk")
        #expect(MaildirFolderName.mailbox(forFolder: "new") == nil)
        #expect(MaildirFolderName.mailbox(forFolder: "cur") == nil)
        #expect(MaildirFolderName.mailbox(forFolder: ".") == nil)
        #expect(MaildirFolderName.mailbox(forFolder: "..") == nil)
        #expect(MaildirFolderName.mailbox(forFolder: "...") == nil)
        #expect(MaildirLayout.mailbox(forEntry: Array(".a&AC8-b".utf8)) == nil, "a decoded / cannot be a folder name")
        #expect(MaildirLayout.mailbox(forEntry: Array(".Sent".utf8))?.name == "Sent")
        #expect(MaildirLayout.mailbox(forEntry: Array(".Sent".utf8))?.newPath == ".Sent/new")
        #expect(MaildirMailbox(name: "INBOX", folder: []).curPath == "cur")
    }

    @Test(arguments: [
        ("1712000000.M1P2.host", "1712000000.M1P2.host:2,S"),
        ("1712000000.M1P2.host:2,", "1712000000.M1P2.host:2,S"),
        ("1712000000.M1P2.host:2,S", "1712000000.M1P2.host:2,S"),
        ("1712000000.M1P2.host:2,FR", "1712000000.M1P2.host:2,FRS"),
        ("1712000000.M1P2.host:2,TDa", "1712000000.M1P2.host:2,DSTa"),
        ("1712000000.M1P2.host:1,experimental", "1712000000.M1P2.host:2,S"),
        ("1712000000.M1P2.host,S=1234:2,R", "1712000000.M1P2.host,S=1234:2,RS"),
    ])
    func readName(_ name: String, _ expected: String) {
        #expect(MaildirMessageName.readName(name) == expected)
    }

    @Test func otherSeparatorsAndUniqueParts() {
        #expect(MaildirMessageName.readName("123.x!2,F", separator: "!") == "123.x!2,FS")
        #expect(MaildirMessageName.unique(Array("123.x:2,FS".utf8)) == Array("123.x".utf8))
        #expect(MaildirMessageName.unique(Array("123.x".utf8)) == Array("123.x".utf8))
        #expect(MaildirMessageName.isMessage(Array("123.x".utf8)))
        #expect(!MaildirMessageName.isMessage(Array(".hidden".utf8)))
        #expect(!MaildirMessageName.isMessage([]))
    }
}
