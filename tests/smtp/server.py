"""A real SMTP server (aiosmtpd) for the e-mail push tests: it requires AUTH LOGIN/PLAIN
with the user and password given, keeps every message it accepts as one JSON line in the
record file, answers 451 (try later) for a recipient named busy@… and 550 for reject@….

    server.py RECORD USER PASSWORD [CERT KEY [smtps|starttls]]

Without a certificate it speaks plain SMTP and offers no STARTTLS. With a certificate and
key (PEM files) it speaks TLS from the first byte (SMTPS, the default mode) or, in mode
`starttls`, starts in clear, offers STARTTLS and refuses every command but EHLO/HELO/NOOP/
QUIT/STARTTLS before it (so AUTH is only possible over TLS).

Record lines: {"kind": "mail", "from", "to", "data", "login", "tls"} for an accepted
message and {"kind": "auth", "mechanism", "tls"} for every AUTH command received (before
any check, so a password sent in clear would show), where "tls" is null (clear), "smtps"
or "starttls". Prints "listening HOST:PORT" once it accepts connections; runs until
killed."""

import asyncio
import json
import socket
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword, syntax


def tls_of(server):
    """How this session is protected: STARTTLS done, TLS from the first byte, or clear."""
    if server._tls_protocol is not None:
        return "starttls"
    if server.transport is not None and server.transport.get_extra_info("sslcontext"):
        return "smtps"
    return None


def append(record, line):
    with open(record, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


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
        append(self.record, {
            "kind": "mail",
            "from": envelope.mail_from,
            "to": envelope.rcpt_tos,
            "data": envelope.content.decode("utf-8", "replace"),
            "login": session.auth_data.login.decode() if session.auth_data else None,
            "tls": tls_of(server),
        })
        return "250 2.0.0 queued"


class RecordingSMTP(SMTP):
    """Notes every AUTH command as it arrives, then handles it as aiosmtpd does."""

    def __init__(self, handler, record, **kwargs):
        super().__init__(handler, **kwargs)
        self.record = record

    @syntax("AUTH <mechanism>")
    async def smtp_AUTH(self, arg):
        append(self.record, {
            "kind": "auth",
            "mechanism": (arg or "").split(" ")[0],
            "tls": tls_of(self),
        })
        await super().smtp_AUTH(arg)


class RecordingController(Controller):
    def __init__(self, handler, record, **kwargs):
        super().__init__(handler, **kwargs)
        self.record = record

    def factory(self):
        return RecordingSMTP(self.handler, self.record, **self.SMTP_kwargs)


def main():
    record, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
    mode = sys.argv[6] if len(sys.argv) > 6 else "smtps"
    if mode not in ("smtps", "starttls"):
        sys.exit(f"unknown mode {mode!r}: smtps or starttls")
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

    if tls is not None and mode == "starttls":
        # Clear until STARTTLS, which is required before AUTH or MAIL.
        security = dict(tls_context=tls, require_starttls=True, auth_require_tls=True)
    else:
        # Implicit TLS (the whole connection) or plain: AUTH is not gated on STARTTLS.
        security = dict(ssl_context=tls, auth_require_tls=False)

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = RecordingController(
        Handler(record), record, hostname="127.0.0.1", port=port,
        authenticator=authenticator, auth_required=True, **security,
    )
    controller.start()
    print(f"listening 127.0.0.1:{port}", flush=True)
    try:
        asyncio.get_event_loop().run_until_complete(asyncio.sleep(3600))
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
