#!/usr/bin/python3
"""A stand-in system tray for tests: the StatusNotifierWatcher a desktop's panel runs, and
a client that reads and clicks the tray menu an app publishes through it.

libayatana-appindicator (the tray behind Tauri on Linux) registers its icon with
org.kde.StatusNotifierWatcher when one is on the session bus and publishes its menu over
com.canonical.dbusmenu; that menu is what a panel shows and clicks. Without a watcher it
falls back to an XEmbed icon no test can reach.

Usage:
  fake-tray-host.py watch RECORD   own the watcher name, print "ready", append every
                                   registered item to RECORD (JSON lines); runs until killed
  fake-tray-host.py menu RECORD    print the newest item's top-level menu entries as JSON
                                   [{"id": 1, "label": "..."}, ...]
  fake-tray-host.py click RECORD ID  send the entry a "clicked" event, as a panel does
Uses jeepney (Debian: python3-jeepney), pure Python, no GLib.
"""
import json
import sys

from jeepney import (DBusAddress, HeaderFields, MessageType, Properties, new_error,
                     new_method_call, new_method_return)
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

WATCHER = "org.kde.StatusNotifierWatcher"
WATCHER_PATH = "/StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"


def watch(record: str) -> None:
    conn = open_dbus_connection(bus="SESSION")
    reply = conn.send_and_get_reply(message_bus.RequestName(WATCHER, 4))  # DO_NOT_QUEUE
    if reply.body[0] != 1:  # PRIMARY_OWNER
        print(f"could not own {WATCHER}: {reply.body}", flush=True)
        sys.exit(1)
    print("ready", flush=True)
    items: list[str] = []

    def props() -> dict:
        return {
            "RegisteredStatusNotifierItems": ("as", items),
            "IsStatusNotifierHostRegistered": ("b", True),
            "ProtocolVersion": ("i", 0),
        }

    while True:
        msg = conn.receive()
        if msg.header.message_type != MessageType.method_call:
            continue
        member = msg.header.fields.get(HeaderFields.member)
        sender = msg.header.fields.get(HeaderFields.sender)
        if member == "RegisterStatusNotifierItem":
            (service,) = msg.body
            # An object path (appindicator) is on the caller's connection; a bus name
            # (KDE style) serves the default path.
            entry = ({"bus": sender, "path": service} if service.startswith("/")
                     else {"bus": service, "path": "/StatusNotifierItem"})
            items.append(f"{entry['bus']}{entry['path']}")
            with open(record, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
            conn.send(new_method_return(msg))
        elif member == "RegisterStatusNotifierHost":
            conn.send(new_method_return(msg))
        elif member == "GetAll":
            conn.send(new_method_return(msg, "a{sv}", (props(),)))
        elif member == "Get":
            _iface, name = msg.body
            if name in props():
                conn.send(new_method_return(msg, "v", (props()[name],)))
            else:
                conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownProperty"))
        elif member == "Introspect":
            conn.send(new_method_return(msg, "s", ("<node/>",)))
        else:
            conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))


def menu_address(conn, record: str) -> DBusAddress:
    with open(record, encoding="utf-8") as f:
        entry = json.loads(f.read().strip().splitlines()[-1])
    item = DBusAddress(entry["path"], bus_name=entry["bus"], interface=ITEM)
    reply = conn.send_and_get_reply(Properties(item).get("Menu"))
    if reply.header.message_type == MessageType.error:
        raise SystemExit(f"no Menu property: {reply.body}")
    (_sig, path) = reply.body[0]
    return DBusAddress(path, bus_name=entry["bus"], interface=MENU)


def menu(record: str) -> None:
    conn = open_dbus_connection(bus="SESSION")
    address = menu_address(conn, record)
    reply = conn.send_and_get_reply(new_method_call(address, "GetLayout", "iias", (0, 1, ["label"])))
    if reply.header.message_type == MessageType.error:
        raise SystemExit(f"GetLayout failed: {reply.body}")
    _revision, (_root, _props, children) = reply.body
    entries = []
    for _sig, (item_id, item_props, _grandchildren) in children:
        label = item_props.get("label", ("s", ""))[1]
        entries.append({"id": item_id, "label": label})
    print(json.dumps(entries, ensure_ascii=False), flush=True)


def click(record: str, item_id: int) -> None:
    conn = open_dbus_connection(bus="SESSION")
    address = menu_address(conn, record)
    reply = conn.send_and_get_reply(
        new_method_call(address, "Event", "isvu", (item_id, "clicked", ("i", 0), 0)))
    if reply.header.message_type == MessageType.error:
        raise SystemExit(f"Event failed: {reply.body}")


def main() -> None:
    command, record = sys.argv[1], sys.argv[2]
    if command == "watch":
        watch(record)
    elif command == "menu":
        menu(record)
    elif command == "click":
        click(record, int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
