"""A window over the whole screen that holds the input focus and prints, one JSON object a
line, the keys and buttons it receives: run with the desktop toolchain's python (python-xlib).
Its background is pure red, so a screenshot shows whether it was taken of this screen."""

from __future__ import annotations

import json

from Xlib import XK, X, display

NAMES = {getattr(XK, n): n[3:] for n in sorted(dir(XK), reverse=True) if n.startswith("XK_")}
d = display.Display()
screen = d.screen()
win = screen.root.create_window(
    0, 0, screen.width_in_pixels, screen.height_in_pixels, 0, screen.root_depth,
    background_pixel=0xFF0000,
    event_mask=X.KeyPressMask | X.KeyReleaseMask | X.ButtonPressMask | X.ButtonReleaseMask
    | X.ExposureMask | X.StructureNotifyMask)
win.set_wm_name("lastexam-test-window")
win.map()
while d.next_event().type != X.MapNotify:
    pass
win.set_input_focus(X.RevertToParent, X.CurrentTime)
d.sync()
print(json.dumps({"ev": "ready"}), flush=True)


def key(detail: int, state: int) -> str:
    sym = (state & X.ShiftMask and d.keycode_to_keysym(detail, 1)) or d.keycode_to_keysym(detail, 0)
    if 0x20 <= sym < 0x7F:
        return chr(sym)
    return NAMES.get(sym, hex(sym))


while True:
    e = d.next_event()
    if e.type == X.MappingNotify:
        d.refresh_keyboard_mapping(e)
    elif e.type in (X.KeyPress, X.KeyRelease):
        print(json.dumps({"ev": "key" if e.type == X.KeyPress else "keyup",
                          "key": key(e.detail, e.state), "state": e.state}), flush=True)
    elif e.type in (X.ButtonPress, X.ButtonRelease):
        print(json.dumps({"ev": "button" if e.type == X.ButtonPress else "buttonup",
                          "button": e.detail, "x": e.root_x, "y": e.root_y}), flush=True)
