"""Draws the ECMA A20.20 blank of job_ticket.json to PKG-STD-07 with ezdxf: dieline.py TICKET OUT."""
import json
import sys

import ezdxf

ticket = json.load(open(sys.argv[1]))
board = next(b for b in ticket["board"] if b["revision"] == ticket["current_revision"])
t = float(board["caliper"].split()[0]) * 0.0254  # points are thousandths of an inch
p, c = ticket["product"]["outside_mm"], ticket["clearance_mm"]
# ECMA: L x W is the opening the tucks close (front across the label, side front-to-back), D the height.
L = p["width"] + 2 * c["each_side_in_plan"]
W = p["depth"] + 2 * c["each_side_in_plan"]
D = p["height"] + c["total_over_height"]

x = [0.0, 14.0]
for size in (L + t, W + t, L + t, W + t / 2):
    x.append(x[-1] + size)
y = [0.0, 15.0]
for size in (W + t, D + t, W + t, 15.0):
    y.append(y[-1] + size)
x0, x1, x2, x3, x4, x5 = x
y0, y1, y2, y3, y4, y5 = y
fd = W / 2


def dust(a, b, yy, s):
    return [(a + t, yy), (a + t + 5, yy + s * fd), (b - t - 5, yy + s * fd), (b - t, yy)]


def tuck(a, b, yy, s):
    yf = yy + s * 15.0
    return [(a + t, yy), (a + t, yf - s * 5), (a + t + 5, yf), (b - t - 5, yf), (b - t, yf - s * 5), (b - t, yy)]


outline = ([(x0, y2 + 4), (x1, y2)] + dust(x2, x3, y2, -1) + [(x3, y2), (x3, y1)] + tuck(x3, x4, y1, -1)
           + [(x4, y1), (x4, y2)] + dust(x4, x5, y2, -1) + [(x5, y2), (x5, y3)] + dust(x4, x5, y3, 1)[::-1]
           + [(x4, y3)] + dust(x2, x3, y3, 1)[::-1] + [(x2, y3), (x2, y4)] + tuck(x1, x2, y4, 1)[::-1]
           + [(x1, y4), (x1, y3), (x0, y3 - 4)])
creases = [((xx, y2), (xx, y3)) for xx in (x1, x2, x3, x4)] + [
    ((x1, y3), (x2, y3)), ((x1 + t, y4), (x2 - t, y4)), ((x3, y2), (x4, y2)), ((x3 + t, y1), (x4 - t, y1)),
    ((x2 + t, y3), (x3 - t, y3)), ((x4 + t, y3), (x5 - t, y3)), ((x2 + t, y2), (x3 - t, y2)), ((x4 + t, y2), (x5 - t, y2))]

doc = ezdxf.new("R2010", units=4)  # $INSUNITS 4: millimetres
doc.layers.add("CUT", color=1)
doc.layers.add("CREASE", color=5)
msp = doc.modelspace()
msp.add_lwpolyline(outline, close=True, dxfattribs={"layer": "CUT"})
for a, b in creases:
    msp.add_line(a, b, dxfattribs={"layer": "CREASE"})
doc.saveas(sys.argv[2])
print(f"t = {t:.4f} mm, inside {L:.2f} x {W:.2f} x {D:.2f}, blank {x5:.2f} x {y5:.2f} mm")
