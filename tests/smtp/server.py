"""A real SMTP server (aiosmtpd) for the e-mail push tests: it requires AUTH LOGIN/PLAIN
with the user and password given, keeps every message it accepts as one JSON line in the
record file, answers 451 (try later) for a recipient named busy@… and 550 for reject@….
With a certificate and key (PEM files) as 4th and 5th arguments it speaks TLS from the
first byte (SMTPS) with that certificate. Prints "listening HOST:PORT" once it accepts
connections; runs until killed."""

import asyncio
import json
import socket
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Handler:
    def __init__(self, record):
        self.record = record

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("busy@"):
            return "451 4.3.0 mailbox busy, try later"
        if address.startswith("reject@"):
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with open(self.record, "a", encoding="utf-8") as f:
            f.write(json.dumps({
                "from": envelope.mail_from,
                "to": envelope.rcpt_tos,
                "data": envelope.content.decode("utf-8", "replace"),
                "login": session.auth_data.login.decode() if session.auth_data else None,
            }) + "\n")
        return "250 2.0.0 queued"


def main():
    record, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
    tls = None
    if len(sys.argv) > 5:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(sys.argv[4], sys.argv[5])

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login.decode() == user
              and auth_data.password.decode() == password)
        if ok:
            return AuthResult(success=True, auth_data=auth_data)
        return AuthResult(success=False, handled=False)

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(
        Handler(record), hostname="127.0.0.1", port=port,
        authenticator=authenticator, auth_required=True, auth_require_tls=False,
        ssl_context=tls,
    )
    controller.start()
    print(f"listening 127.0.0.1:{port}", flush=True)
    try:
        asyncio.get_event_loop().run_until_complete(asyncio.sleep(3600))
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
