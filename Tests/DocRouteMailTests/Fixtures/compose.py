#!/usr/bin/env python3
"""Composes test mail with Python's standard `email` package and states what a reader must find.

  compose.py message SCENARIO OUT_DIR
      writes OUT_DIR/message.eml, one file per expected attachment (OUT_DIR/expected-N) and
      OUT_DIR/expected.json: the envelope and, per attachment, its IMAP part path, file name,
      MIME type and payload file; all of it as Python's own parser reads the composed bytes back.
  compose.py maildir ROOT OUT_DIR
      delivers the "rich" and "legacy" messages into a Maildir at ROOT the way an MDA does
      (Python's mailbox.Maildir: tmp/ then a rename into new/), in INBOX and in folders
      `.&AMk-t&AOk-` (Été) and `.Work.Reports`; for each delivered file, states what a reader must
      find in it (as for `message`, from the bytes handed to the Maildir) in OUT_DIR/<n>/; prints
      {mailbox: [{"name": file name in new/, "expected": OUT_DIR/<n>}]} as JSON.
  compose.py expect FILE OUT_DIR
      for a message written by hand (defects/*.eml): what Python's `email` finds in FILE, written
      as for `message` (OUT_DIR/expected.json with, per attachment, Python's defects too).
  compose.py big OUT_DIR MIB
      writes OUT_DIR/message.eml: a text part, one base64 attachment `big.bin` of MIB MiB, a text
      attachment full of lines starting with dashes; prints {"size", "sha256"} of big.bin.
  compose.py sha256 FILE
      prints the SHA-256 of FILE (streamed).
  compose.py flags ROOT
      prints {mailbox: [{"subdir": "new" or "cur", "flags": "S"}]} as Python's mailbox reads ROOT.

Payloads are pseudo-random but seeded, so runs are reproducible.
"""
import email
import email.header
import io
import email.policy
import json
import mailbox
import os
import random
import sys
from email.message import EmailMessage
from email.mime.application import MIMEApplication
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email import encoders
from email.generator import BytesGenerator


def payload(seed, size):
    return random.Random(seed).randbytes(size)


def rich():
    """policy.default (CRLF): RFC 2047 header, QP text, base64 binaries, RFC 2231 names with
    continuations, duplicates, an inline image, and a forwarded message with its own attachments."""
    inner = EmailMessage()
    inner["From"] = "Åsa Nilsson <asa@example.se>"
    inner["To"] = "zoe@example.org"
    inner["Subject"] = "Schéma du réseau"
    inner["Message-ID"] = "<inner-1@example.se>"
    inner["Date"] = "Mon, 31 Mar 2025 08:15:00 +0200"
    inner.set_content("Voici le schéma.\n")
    inner.add_attachment(payload(3, 50_000), maintype="image", subtype="png", filename="diagramme réseau.png")
    inner.add_attachment("nom;valeur\nété;1\n".encode("utf-8"), maintype="text", subtype="csv", filename="données.csv")

    message = EmailMessage(policy=email.policy.SMTP)
    message["From"] = "Zoë Ünïcode <zoe@example.org>"
    message["To"] = "team@example.org"
    message["Subject"] = "Rapport été – 2025 ✓ avec pièces jointes"
    message["Message-ID"] = "<rich-1@example.org>"
    message["Date"] = "Tue, 01 Apr 2025 10:00:00 +0200"
    message.set_content("Grüße aus Köln — voilà les fichiers.\n" + "Ligne très longue " * 20 + "\n", cte="quoted-printable")
    message.add_alternative("<p>Grüße aus <b>Köln</b></p>\n", subtype="html")
    message.add_attachment(payload(1, 300_000), maintype="application", subtype="pdf", filename="Übersicht März 2025.pdf")
    long_name = "très-long-nom-de-fichier-" * 5 + "Ω.txt"
    text = ("Première ligne avec des espaces à la fin   \n" + "é" * 200 + "\n= égal\n") * 30
    message.add_attachment(text, subtype="plain", filename=long_name, cte="quoted-printable")
    message.add_attachment(payload(4, 20_000), maintype="image", subtype="jpeg", filename="photo.jpg")
    message.add_attachment(payload(5, 30_000), maintype="image", subtype="jpeg", filename="photo.jpg")
    message.add_attachment(payload(6, 1_000), maintype="image", subtype="png", filename="logo.png", disposition="inline")
    message.add_attachment(inner)
    return message.as_bytes(policy=email.policy.SMTP)


def legacy():
    """compat32 (LF line endings): ISO-8859-1 RFC 2231 name, an RFC 2047 word inside a quoted
    filename (as Outlook writes), a Content-Type name= only, a Windows-1251 subject, 8-bit body."""
    message = MIMEMultipart()
    message["From"] = str(email.header.Header("Jiří Dvořák", "iso-8859-2")) + " <jiri@example.cz>"
    message["Subject"] = email.header.Header("Отчёт за март", "windows-1251")
    message["Message-ID"] = "<legacy-2@example.cz>"
    message["Date"] = "Wed, 02 Apr 2025 09:30:00 +0000"
    message.attach(MIMEText("Dobrý den, v příloze.\n", "plain", "utf-8"))

    cafe = MIMEBase("text", "plain")
    cafe.set_payload("café crème\n".encode("latin-1"))
    encoders.encode_base64(cafe)
    cafe.add_header("Content-Disposition", "attachment", filename=("iso-8859-1", "", "café.txt"))
    message.attach(cafe)

    outlook = MIMEApplication(payload(7, 10_000), "vnd.ms-excel")
    encoded = email.header.Header("Tabulka č. 1.xls", "utf-8").encode()
    outlook.add_header("Content-Disposition", "attachment", filename=encoded)
    message.attach(outlook)

    named = MIMEApplication(payload(8, 4_000), "octet-stream")
    named.set_param("name", "data.bin")
    message.attach(named)
    return message.as_bytes()


SCENARIOS = {"rich": rich, "legacy": legacy}


def join(prefix, number):
    return str(number) if not prefix else f"{prefix}.{number}"


def decode_name(name):
    if name is None:
        return None
    return str(email.header.make_header(email.header.decode_header(name)))


def message_bytes(message, linesep):
    """A parsed message written back as Python's generator writes it (compat32 keeps headers as
    they came), with the line breaks of the mail it came from."""
    out = io.BytesIO()
    BytesGenerator(out, mangle_from_=False, policy=message.policy.clone(linesep=linesep)).flatten(message)
    return out.getvalue()


def expected_attachments(entity, path, is_message, found, linesep="\r\n"):
    """Walks the message as IMAP numbers its parts and lists what counts as an attachment: a leaf
    part whose disposition is `attachment` or that has a file name (`get_filename`: the
    disposition's filename, else Content-Type's name), and every attached message (a
    message/rfc822 part, as mail clients and `iter_attachments` list it), whose bytes are the
    message as Python writes it back; the attachments inside an attached message count too."""
    content_type = entity.get_content_type()
    part_path = join(path, 1) if is_message else path
    if entity.get_content_maintype() == "multipart":
        for number, child in enumerate(entity.get_payload(), 1):
            expected_attachments(child, join(path, number), False, found, linesep)
    elif content_type in ("message/rfc822", "message/global") and entity.is_multipart():
        inner = entity.get_payload()[0]
        found.append({
            "partPath": part_path,
            "fileName": decode_name(entity.get_filename()),
            "mimeType": content_type,
            "payload": message_bytes(inner, linesep),
            "defects": [type(defect).__name__ for defect in entity.defects],
            "attachedMessage": True,
            "subject": decode_name(inner["Subject"]),
        })
        expected_attachments(inner, part_path, True, found, linesep)
    else:
        name = decode_name(entity.get_filename())
        disposition = entity.get_content_disposition()
        if disposition == "attachment" or name or content_type in ("message/rfc822", "message/global"):
            payload = entity.get_payload(decode=True)
            found.append({
                "partPath": part_path,
                "fileName": name,
                "mimeType": content_type,
                "payload": payload,
                # After get_payload(decode=True): its decoding defects (InvalidBase64PaddingDefect…) too.
                "defects": [type(defect).__name__ for defect in entity.defects],
                "attachedMessage": False,
            })


def write_message(scenario, out_dir):
    data = SCENARIOS[scenario]()
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "message.eml"), "wb") as file:
        file.write(data)
    write_expectations(data, out_dir)


def write_expectations(data, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    parsed = email.message_from_bytes(data, policy=email.policy.compat32)
    found = []
    expected_attachments(parsed, "", True, found, "\r\n" if b"\r\n" in data else "\n")
    attachments = []
    for index, attachment in enumerate(found):
        payload_path = os.path.join(out_dir, f"expected-{index}")
        with open(payload_path, "wb") as file:
            file.write(attachment.pop("payload"))
        attachment["file"] = payload_path
        attachments.append(attachment)
    envelope = {key: decode_name(parsed[header]) for key, header in
                [("from", "From"), ("subject", "Subject"), ("messageID", "Message-ID"), ("date", "Date")]}
    defects = []
    for part in parsed.walk():
        defects += [type(defect).__name__ for defect in part.defects]
    with open(os.path.join(out_dir, "expected.json"), "w") as file:
        json.dump({"envelope": envelope, "attachments": attachments, "defects": defects}, file, ensure_ascii=False)


def write_maildir(root, out_dir):
    box = mailbox.Maildir(root, create=True)
    folders = {"INBOX": (box, root, [rich()]),
               "Été": (box.add_folder("&AMk-t&AOk-"), os.path.join(root, ".&AMk-t&AOk-"), [legacy()]),
               "Work.Reports": (box.add_folder("Work.Reports"), os.path.join(root, ".Work.Reports"), [rich(), legacy()])}
    delivered = {}
    count = 0
    for name, (folder, folder_path, messages) in folders.items():
        delivered[name] = []
        for data in messages:
            # The expectations come from the bytes handed to the MDA (Maildir stores them as they
            # are): a running docrouted may move the message to cur/ before it could be read back.
            expected = os.path.join(out_dir, str(count))
            count += 1
            write_expectations(data, expected)
            # A new message's key is its file name in new/.
            delivered[name].append({"name": folder.add(data), "expected": expected})
    json.dump(delivered, sys.stdout, ensure_ascii=False)


def write_big(out_dir, mebibytes):
    """Streams the message out so its size costs Python no memory either."""
    import base64
    import hashlib
    os.makedirs(out_dir, exist_ok=True)
    generator = random.Random(11)
    digest = hashlib.sha256()
    total = mebibytes * 1024 * 1024
    with open(os.path.join(out_dir, "message.eml"), "wb") as file:
        file.write(b"From: Big Sender <big@example.org>\r\nSubject: large\r\nMessage-ID: <big@example.org>\r\n"
                   b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"big-boundary\"\r\n\r\n"
                   b"--big-boundary\r\nContent-Type: text/plain\r\n\r\nThe file is attached.\r\n"
                   b"--big-boundary\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n"
                   b"Content-Disposition: attachment; filename=\"big.bin\"\r\n\r\n")
        written = 0
        while written < total:
            block = generator.randbytes(min(57 * 16384, total - written))
            digest.update(block)
            file.write(base64.encodebytes(block).replace(b"\n", b"\r\n"))
            written += len(block)
        file.write(b"\r\n--big-boundary\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\n\r\n")
        line = b"-- a line that starts like a boundary\r\n---\r\nand an ordinary one\r\n"
        file.write(line * (max(1, mebibytes // 16) * 1024 * 1024 // len(line)))
        file.write(b"end\r\n--big-boundary--\r\n")
    json.dump({"size": total, "sha256": digest.hexdigest()}, sys.stdout)


def read_flags(root):
    box = mailbox.Maildir(root, create=False)
    folders = {"INBOX": box}
    for name in box.list_folders():
        folders[name] = box.get_folder(name)
    result = {}
    for name, folder in folders.items():
        result[name] = sorted(({"subdir": folder.get_message(key).get_subdir(), "flags": folder.get_message(key).get_flags()}
                               for key in folder.keys()), key=lambda entry: (entry["subdir"], entry["flags"]))
    json.dump(result, sys.stdout, ensure_ascii=False)


def sha256_of(path):
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    print(digest.hexdigest())


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "message":
        write_message(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "expect":
        with open(sys.argv[2], "rb") as source:
            write_expectations(source.read(), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "maildir":
        write_maildir(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "big":
        write_big(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "sha256":
        sha256_of(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "flags":
        read_flags(sys.argv[2])
    else:
        sys.exit(__doc__)
