"""lastexam window monitor: runs in a desktop trial's sandbox (Debian's python3 -I and
python3-xlib) and appends one JSON line per event to the windows log:

    {"t", "event": "map"|"unmap"|"focus", "window", "wm_class", "wm_instance", "title", "pid", "exe"}
    {"t", "event": "input", "keys", "buttons", "wm_class"}   about once a second while input arrives

`map`/`unmap`: a window joins or leaves the window manager's client list; `focus`: the active
window changes; `input`: key and button presses (XInput2 raw events, XTEST's included) counted
against the window that had the focus. Past the byte or line cap one `capped` line is written
and nothing more.

    monitor.py OUT MAX_BYTES MAX_LINES
"""

import contextlib
import json
import os
import select
import signal
import sys
import time

from Xlib import X, display
from Xlib.error import ConnectionClosedError
from Xlib.ext import ge, res, xinput

INPUT_EVERY_S = 1.0
MAX_TITLE = 200


class Log:
    def __init__(self, path, max_bytes, max_lines):
        self.f = open(path, "a", encoding="utf-8")  # noqa: SIM115
        self.left_bytes, self.left_lines = max_bytes, max_lines
        self.capped = False

    def write(self, record):
        if self.capped:
            return
        line = json.dumps({"t": round(time.time(), 3), **record}, ensure_ascii=False) + "\n"
        size = len(line.encode())
        capped_line = 40
        if size + capped_line > self.left_bytes or self.left_lines <= 1:
            self.capped = True
            line = json.dumps({"t": round(time.time(), 3), "event": "capped"}) + "\n"
        self.f.write(line)
        self.f.flush()
        self.left_bytes -= size
        self.left_lines -= 1


class Monitor:
    def __init__(self, d, log):
        self.d, self.log = d, log
        self.root = d.screen().root
        atom = d.intern_atom
        self.client_list = atom("_NET_CLIENT_LIST")
        self.active = atom("_NET_ACTIVE_WINDOW")
        self.wm_pid = atom("_NET_WM_PID")
        self.wm_name = atom("_NET_WM_NAME")
        self.utf8 = atom("UTF8_STRING")
        self.clients = {}  # window id -> its map record
        self.focused = 0
        self.focused_class = ""  # kept after its window is gone: its last presses are its own
        self.keys = self.buttons = 0
        self.counted_since = time.monotonic()
        self.root.change_attributes(event_mask=X.PropertyChangeMask)
        self.xres = d.has_extension("X-Resource")
        self.xi = d.query_extension("XInputExtension")
        if self.xi.present:
            # Announced as 2.2 (python-xlib says 2.0): from 2.1 on, raw events reach the root
            # window even while a client (the window manager, on a click) holds a grab.
            xinput.XIQueryVersion(display=d.display, opcode=self.xi.major_opcode,
                                  major_version=2, minor_version=2)
            self.root.xinput_select_events(
                [(xinput.AllMasterDevices, xinput.RawKeyPressMask | xinput.RawButtonPressMask)]
            )
        d.flush()

    def describe(self, wid):
        win = self.d.create_resource_object("window", wid)
        try:
            cls = win.get_wm_class() or ("", "")
            name = win.get_full_property(self.wm_name, self.utf8)
            title = name.value.decode("utf-8", "replace") if name else (win.get_wm_name() or "")
            prop = win.get_full_property(self.wm_pid, X.AnyPropertyType)
            pid = int(prop.value[0]) if prop and len(prop.value) else None
        except Exception:  # the window went away meanwhile
            cls, title, pid = ("", ""), "", None
        if pid is None and self.xres:  # not every program sets _NET_WM_PID: ask the server
            try:
                ids = self.d.res_query_client_ids([{"client": wid, "mask": res.LocalClientPIDMask}])
                pid = next((int(i.value[0]) for i in ids.ids if i.value), None)
            except Exception:
                pid = None
        exe = None
        if pid is not None:
            with contextlib.suppress(OSError):
                exe = os.readlink(f"/proc/{pid}/exe")
        if isinstance(title, bytes):
            title = title.decode("latin-1")
        return {"window": hex(wid), "wm_class": cls[1], "wm_instance": cls[0],
                "title": str(title)[:MAX_TITLE], "pid": pid, "exe": exe}

    def ids(self, atom):
        prop = self.root.get_full_property(atom, X.AnyPropertyType)
        return [int(w) for w in prop.value] if prop else []

    def refresh_clients(self):
        now = self.ids(self.client_list)
        for wid in now:
            if wid not in self.clients:
                self.clients[wid] = self.describe(wid)
                self.log.write({"event": "map", **self.clients[wid]})
        for wid in [w for w in self.clients if w not in now]:
            self.log.write({"event": "unmap", **self.clients.pop(wid)})

    def refresh_focus(self):
        ids = self.ids(self.active)
        wid = ids[0] if ids and ids[0] in self.clients else 0  # a client, or none
        if wid == self.focused:
            return
        self.flush_input()
        self.focused = wid
        info = self.clients.get(wid) or {"window": "0x0", "wm_class": "", "wm_instance": "",
                                         "title": "", "pid": None, "exe": None}
        self.focused_class = info["wm_class"]
        self.log.write({"event": "focus", **info})

    def flush_input(self):
        if self.keys or self.buttons:
            self.log.write({"event": "input", "keys": self.keys, "buttons": self.buttons,
                            "wm_class": self.focused_class})
        self.keys = self.buttons = 0
        self.counted_since = time.monotonic()

    def handle(self, ev):
        if ev.type == X.PropertyNotify:
            if ev.atom == self.client_list:
                self.refresh_clients()
            elif ev.atom == self.active:
                self.refresh_clients()
                self.refresh_focus()
        elif ev.type == ge.GenericEventCode and self.xi.present:
            if ev.evtype == xinput.RawKeyPress:
                self.keys += 1
            elif ev.evtype == xinput.RawButtonPress:
                self.buttons += 1

    def run(self, stop):
        self.refresh_clients()
        self.refresh_focus()
        while not stop:
            if self.d.pending_events() == 0:
                select.select([self.d.fileno()], [], [], INPUT_EVERY_S / 2)
            while self.d.pending_events():
                self.handle(self.d.next_event())
            if time.monotonic() - self.counted_since >= INPUT_EVERY_S:
                self.flush_input()
        self.d.sync()  # what happened before the stop is still logged
        while self.d.pending_events():
            self.handle(self.d.next_event())
        self.flush_input()


def main(argv):
    out, max_bytes, max_lines = argv[1], int(argv[2]), int(argv[3])
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    try:
        d = display.Display()
    except Exception as e:
        sys.stderr.write(f"monitor: cannot open the display: {e}\n")
        return 1
    with contextlib.suppress(ConnectionClosedError, OSError):  # the X server is gone
        Monitor(d, Log(out, max_bytes, max_lines)).run(stop)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
