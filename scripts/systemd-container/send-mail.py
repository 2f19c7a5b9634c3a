#!/usr/bin/env python3
"""Sends one mail over SMTP for systemd-container-test.sh, as any mail client would.

  send-mail.py HOST PORT FROM TO CLAIMED_FILE UNCLAIMED_FILE MESSAGE_ID

The message has a text part and two attachments: CLAIMED_FILE as chemical/x-pdb (Molecules claims
it) and UNCLAIMED_FILE as application/octet-stream (nobody does).
"""
import os
import smtplib
import sys
from email.message import EmailMessage

host, port, sender, recipient, claimed, unclaimed, message_id = sys.argv[1:8]
message = EmailMessage()
message["From"] = sender
message["To"] = recipient
message["Subject"] = "Two attachments"
message["Message-ID"] = message_id
message["Date"] = "Mon, 23 Nov 2026 12:00:00 +0000"
message.set_content("One molecule and one file nobody opens.\n")
with open(claimed, "rb") as data:
    message.add_attachment(data.read(), maintype="chemical", subtype="x-pdb", filename=os.path.basename(claimed))
with open(unclaimed, "rb") as data:
    message.add_attachment(data.read(), maintype="application", subtype="octet-stream", filename=os.path.basename(unclaimed))
with smtplib.SMTP(host, int(port), timeout=60) as smtp:
    refused = smtp.send_message(message)
print(f"sent {message_id} to {recipient} over SMTP {host}:{port}; refused: {refused or 'none'}")
