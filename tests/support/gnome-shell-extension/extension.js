// For cmux-tray's tests only (tests/support/gnome.rs): GNOME Shell 43 answers no Eval, so this
// extension tells the test, on the session bus, what the shell holds, and clicks as a person does.
const { Clutter, Gio, GLib } = imports.gi;
const Main = imports.ui.main;

const IFACE = `<node><interface name="org.cmuxtray.GnomeShellTest">
  <method name="List"><arg type="as" direction="out"/></method>
  <method name="Banner"><arg type="s" direction="out"/></method>
  <method name="ClickNewest"><arg type="s" direction="out"/></method>
</interface></node>`;

class Extension {
    enable() {
        this._pointer = Clutter.get_default_backend().get_default_seat()
            .create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
        this._impl = Gio.DBusExportedObject.wrapJSObject(IFACE, this);
        this._impl.export(Gio.DBus.session, '/org/cmuxtray/GnomeShellTest');
        this._name = Gio.bus_own_name_on_connection(Gio.DBus.session,
            'org.cmuxtray.GnomeShellTest', Gio.BusNameOwnerFlags.NONE, null, null);
    }

    disable() {
        Gio.bus_unown_name(this._name);
        this._impl.unexport();
        this._pointer = null;
    }

    // Every notification the message tray's sources hold, as "source: title".
    List() {
        return this._notifications().map(n => `${n.source.title}: ${n.title}`);
    }

    // The title of the banner on screen, or "" when none shows.
    Banner() {
        const banner = Main.messageTray._banner;
        return banner && banner.mapped ? banner.notification.title : '';
    }

    // A click on the newest notification: with its banner on screen, a pointer press and release
    // on the banner's title row (a virtual pointer, as mutter's own tests drive input), else what
    // that click calls (calendar.js's NotificationMessage.vfunc_clicked: activate()). Says which.
    ClickNewest() {
        const all = this._notifications();
        if (all.length === 0)
            return '';
        const newest = all[all.length - 1];
        const banner = Main.messageTray._banner;
        if (!banner || !banner.mapped || banner.notification !== newest) {
            newest.activate();
            return 'activate';
        }
        const [x, y] = banner.get_transformed_position();
        const [width, height] = banner.get_transformed_size();
        const time = GLib.get_monotonic_time();
        this._pointer.notify_absolute_motion(time, x + width / 3, y + Math.min(height / 4, 20));
        this._pointer.notify_button(time + 1000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.PRESSED);
        this._pointer.notify_button(time + 2000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.RELEASED);
        return 'pointer';
    }

    _notifications() {
        return Main.messageTray.getSources().flatMap(s => s.notifications);
    }
}

function init() {
    return new Extension();
}
