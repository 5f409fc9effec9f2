#!/usr/bin/python3
"""Drives a StatusNotifierItem over D-Bus, as a tray host would, for the tests.

  sni.py items                      the registered items (bus names), from the watcher
  sni.py layout NAME                the menu (com.canonical.dbusmenu GetLayout) as JSON
  sni.py click NAME ID              a click on menu item ID (Event "clicked")
  sni.py activate NAME              a left click on the item (org.kde.StatusNotifierItem.Activate)
  sni.py props NAME                 the item's properties (Status, ToolTip …) as JSON
"""
import json
import sys

import dbus

bus = dbus.SessionBus()


def plain(v):
    if isinstance(v, (dbus.Array, list)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.Struct, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (dbus.Dictionary, dict)):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(v)
    return str(v)


def find_item_path(bus_name, path="/"):
    """The object under `path` that implements org.kde.StatusNotifierItem (a tray host's search
    when the watcher gives a bus name alone, as it does for libayatana-appindicator's items)."""
    import xml.etree.ElementTree as ET
    xml = bus.get_object(bus_name, path).Introspect(dbus_interface="org.freedesktop.DBus.Introspectable")
    root = ET.fromstring(str(xml))
    if any(i.get("name") == "org.kde.StatusNotifierItem" for i in root.findall("interface")):
        return path
    for node in root.findall("node"):
        found = find_item_path(bus_name, path.rstrip("/") + "/" + node.get("name"))
        if found:
            return found
    return None


def split(name):
    # The watcher lists "busname/objectpath" or just the bus name.
    if "/" in name:
        bus_name, path = name.split("/", 1)
        return bus_name, "/" + path
    return name, find_item_path(name) or "/StatusNotifierItem"


def item(name):
    bus_name, path = split(name)
    return bus.get_object(bus_name, path)


def menu_path(name):
    props = item(name).GetAll("org.kde.StatusNotifierItem", dbus_interface="org.freedesktop.DBus.Properties")
    return split(name)[0], str(props["Menu"])


def layout_node(node):
    ident, props, children = node
    return {"id": int(ident), "props": plain(props), "children": [layout_node(c) for c in children]}


cmd = sys.argv[1]
if cmd == "items":
    watcher = bus.get_object("org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher")
    items = watcher.Get("org.kde.StatusNotifierWatcher", "RegisteredStatusNotifierItems", dbus_interface="org.freedesktop.DBus.Properties")
    print(json.dumps([str(i) for i in items]))
elif cmd == "layout":
    bus_name, path = menu_path(sys.argv[2])
    menu = bus.get_object(bus_name, path)
    _rev, root = menu.GetLayout(0, -1, dbus.Array([], signature="s"), dbus_interface="com.canonical.dbusmenu")
    print(json.dumps(layout_node(root)))
elif cmd == "click":
    bus_name, path = menu_path(sys.argv[2])
    menu = bus.get_object(bus_name, path)
    menu.Event(dbus.Int32(int(sys.argv[3])), "clicked", dbus.Int32(0, variant_level=1), dbus.UInt32(0), dbus_interface="com.canonical.dbusmenu")
elif cmd == "activate":
    item(sys.argv[2]).Activate(dbus.Int32(0), dbus.Int32(0), dbus_interface="org.kde.StatusNotifierItem")
elif cmd == "props":
    props = item(sys.argv[2]).GetAll("org.kde.StatusNotifierItem", dbus_interface="org.freedesktop.DBus.Properties")
    props.pop("IconPixmap", None)
    print(json.dumps(plain(props)))
