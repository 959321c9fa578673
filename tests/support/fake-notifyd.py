#!/usr/bin/python3
"""A stand-in desktop notification daemon for tests: owns org.freedesktop.Notifications
on the session bus and appends every Notify call to a JSON-lines file.

Usage: fake-notifyd.py RECORD_FILE  (prints "ready" once the name is owned)
Runs until killed. Uses jeepney (Debian: python3-jeepney), pure Python, no GLib.
"""
import json
import sys

from jeepney import HeaderFields, MessageType, new_method_return, new_error
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.Notifications"


def main() -> None:
    record = sys.argv[1]
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName(NAME, 4))  # DO_NOT_QUEUE
    if reply.body[0] != 1:  # PRIMARY_OWNER
        print(f"could not own {NAME}: {reply.body}", flush=True)
        sys.exit(1)
    print("ready", flush=True)
    next_id = 1
    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        if member == "Notify":
            app, _replaces, _icon, summary, body, actions, _hints, timeout = msg.body
            with open(record, "a", encoding="utf-8") as f:
                f.write(json.dumps({"app_name": app, "summary": summary, "body": body,
                                    "actions": list(actions), "expire_timeout": timeout},
                                   ensure_ascii=False) + "\n")
            conn.send(new_method_return(msg, "u", (next_id,)))
            next_id += 1
        elif member == "GetCapabilities":
            conn.send(new_method_return(msg, "as", (["body", "actions"],)))
        elif member == "GetServerInformation":
            conn.send(new_method_return(msg, "ssss", ("fake-notifyd", "wyckoff-tests", "1", "1.2")))
        elif member == "CloseNotification":
            conn.send(new_method_return(msg))
        else:
            conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))


if __name__ == "__main__":
    main()
