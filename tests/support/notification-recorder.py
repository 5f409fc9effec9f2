#!/usr/bin/python3
"""A freedesktop notification server for tests: owns org.freedesktop.Notifications on the bus
it is started on, records every call as a JSON line, and can be told to click a banner.

It keeps the protocol's semantics the project relies on: ids it hands out, `replaces_id`, and
replacement by `x-dunst-stack-tag` (as dunst does), so a test can count live banners per item.
Usage: notification-recorder.py LOG_FILE [--body-markup] [--tagless] [--notify-delay-ms N]
With --body-markup it advertises the `body-markup` capability, as GNOME Shell, KDE and dunst do
(it records the body as it came; it renders nothing). With --tagless it neither lists nor honours
`x-dunst-stack-tag`, as GNOME Shell and KDE do (a banner is replaced only by its id). With
--notify-delay-ms it shows (records) a banner at once and answers `Notify` N ms later, so that a
client killed meanwhile never learns the id of a banner that is on screen. A banner whose summary
holds "[refuse]" is refused with a D-Bus error, as a server refuses a banner it cannot show.
"""
import json
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

IFACE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"

log = open(sys.argv[1], "a", buffering=1)
BODY_MARKUP = "--body-markup" in sys.argv[2:]
TAGLESS = "--tagless" in sys.argv[2:]
DELAY_MS = int(sys.argv[sys.argv.index("--notify-delay-ms") + 1]) if "--notify-delay-ms" in sys.argv else 0


def plain(value):
    """A D-Bus value as JSON: numbers stay numbers (a byte is not a character)."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(value)
    return str(value)


def record(**event):
    event["at"] = time.time()
    log.write(json.dumps(event) + "\n")


class Recorder(dbus.service.Object):
    def __init__(self, bus):
        name = dbus.service.BusName(IFACE, bus, do_not_queue=True)
        super().__init__(name, PATH)
        self.next_id = 0
        self.live = {}  # id -> stack tag

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u", async_callbacks=("reply", "error"))
    def Notify(self, app, replaces_id, icon, summary, body, actions, hints, timeout, reply, error):
        if "[refuse]" in str(summary):
            record(event="refused", summary=str(summary))
            error(dbus.exceptions.DBusException("this banner cannot be shown", name="org.freedesktop.DBus.Error.InvalidArgs"))
            return
        nid = self.show(replaces_id, summary, body, actions, hints, app, timeout)
        if DELAY_MS:
            GLib.timeout_add(DELAY_MS, lambda: reply(dbus.UInt32(nid)) and False)
        else:
            reply(dbus.UInt32(nid))

    def show(self, replaces_id, summary, body, actions, hints, app, timeout):
        tag = None if TAGLESS else (str(hints.get("x-dunst-stack-tag", "")) or None)
        replaced = None
        if replaces_id and int(replaces_id) in self.live:
            nid, replaced = int(replaces_id), "id"
        elif tag and tag in self.live.values():
            nid, replaced = next(k for k, v in self.live.items() if v == tag), "tag"
        else:
            self.next_id += 1
            nid = self.next_id
        self.live[nid] = tag
        record(
            event="notify",
            id=nid,
            replacesId=int(replaces_id),
            replaced=replaced,
            app=str(app),
            summary=str(summary),
            body=str(body),
            actions=[str(a) for a in actions],
            hints={str(k): plain(v) for k, v in hints.items()},
            timeout=int(timeout),
        )
        return nid

    @dbus.service.method(IFACE, in_signature="u")
    def CloseNotification(self, nid):
        self.live.pop(int(nid), None)
        record(event="close", id=int(nid))
        self.NotificationClosed(nid, 3)

    @dbus.service.method(IFACE, out_signature="as")
    def GetCapabilities(self):
        record(event="capabilities")
        return ["actions", "body"] + ([] if TAGLESS else ["x-dunst-stack-tag"]) + (["body-markup"] if BODY_MARKUP else [])

    @dbus.service.method(IFACE, out_signature="ssss")
    def GetServerInformation(self):
        return ("notification-recorder", "cmux-tray tests", "1", "1.2")

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, nid, action):
        pass

    @dbus.service.signal(IFACE, signature="us")
    def ActivationToken(self, nid, token):
        pass

    @dbus.service.method("org.cmuxtray.Recorder", in_signature="uss")
    def InvokeWithToken(self, nid, action, token):
        """A click on a Wayland desktop (spec 1.2): the activation token first, then the action."""
        record(event="click", id=int(nid), action=str(action), token=str(token))
        self.ActivationToken(nid, token)
        self.ActionInvoked(nid, action)

    @dbus.service.method("org.cmuxtray.Recorder", in_signature="us")
    def Invoke(self, nid, action):
        """What a click on a banner does: the server emits ActionInvoked."""
        record(event="click", id=int(nid), action=str(action))
        self.ActionInvoked(nid, action)


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
recorder = Recorder(dbus.SessionBus())
record(event="ready")
GLib.MainLoop().run()
