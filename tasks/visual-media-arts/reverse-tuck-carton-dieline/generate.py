"""Seeded generator of inputs/ and reference/ for reverse-tuck-carton-dieline: python3 generate.py --out DIR.

The job ticket gives the product in the client's words (width, depth, height) with clearances, and
the board by revision with its caliper in points; the house standard gives the ECMA A20.20
allowances. The reference holds the die's cut contour and crease segments in millimetres, print
side up, origin at the blank's lower-left corner.
"""

import argparse
import json
import random
from pathlib import Path

SEED = 6107
CANARY = "2c9d4436-3b99-4083-8d49-781445dea367"
PT_MM = 0.0254  # one caliper point is a thousandth of an inch
GLUE, TUCK, TAPER, CHAMFER, DUST_SIDE = 14.0, 15.0, 4.0, 5.0, 5.0
STANDARD = """# PKG-STD-07 — House CAD standard for folding-carton dielines (SBS board)

Issue 4. Applies to every structural drawing sent to the die shop.

## 1. Drawing

1.1 One DXF per structure, drawn 1:1 in millimetres; the header declares the units
(`$INSUNITS` = 4, millimetres).

1.2 The blank is drawn as seen from the print side (the outside of the carton), with the
panel run horizontal, the glue flap at the left, the carton's top towards the top of the
sheet (+Y), and the lower-left corner of the blank's bounding box at (0, 0). A blank drawn
from the inside, or turned over, is a mirror image: the die would cut the carton inside out.

1.3 Layers: `CUT` holds the cutting rule and nothing else; `CREASE` holds the creasing
rule and nothing else. Annotations and dimensions, if any, go on `DIM` and are ignored by
the die shop. No geometry on layer `0`.

1.4 The cutting rule is one continuous closed contour (the outline of the blank; no inner
cuts on the structures covered here). A crease never lies on the cutting rule: creases run
from cut edge to cut edge inside the blank.

## 2. Dimensions and board allowances

2.1 Carton sizes are ECMA inside dimensions L × W × D: L and W are the sides of the
opening the tuck closes (L the longer one, the front and back panels), D the third
dimension, at right angles to the opening.

2.2 Allowances, in calipers (t) of the board in use, crease to crease:

| element | size |
|---|---|
| front and back panels | L + t |
| side panel between two creases | W + t |
| closing side panel (crease to the free edge at the glue joint) | W + t/2 |
| body, closure hinge to closure hinge | D + t |
| closure panel, hinge to tuck crease | W + t |

## 3. ECMA A20.20 reverse tuck end: house construction

3.1 Panel run from the left: glue flap, back panel, side panel, front panel, closing side
panel. The glue flap is hinged on the back panel and is glued inside the closing side panel.

3.2 Reverse tuck: the top closure (closure panel and its tuck flap) is hinged on the top
edge of the back panel; the bottom closure on the bottom edge of the front panel. The top
edge of the front panel and the bottom edge of the back panel are cut.

3.3 Glue flap: 14 mm wide, full body height at its hinge; its free edge is 4 mm shorter at
each end (straight tapers).

3.4 Tuck flaps: 15 mm deep from the tuck crease; one caliper narrower than the closure
panel on each side (the step is cut along the line of the tuck crease); the two free
corners chamfered 5 mm × 45°.

3.5 Dust flaps on both side panels, top and bottom: hinged on the body crease, set in one
caliper from each body crease (the relief is cut along the line of the hinge), W/2 deep,
and their free edge 5 mm shorter at each end than the hinge (straight tapers).
"""


def dieline(length: float, width: float, depth: float, t: float) -> tuple[list, list, dict]:
    """Cut contour (closed, counter-clockwise) and named crease segments of an ECMA A20.20 blank."""
    x0, x1 = 0.0, GLUE
    x2 = x1 + length + t
    x3 = x2 + width + t
    x4 = x3 + length + t
    x5 = x4 + width + t / 2
    y1 = TUCK
    y2 = y1 + width + t
    y3 = y2 + depth + t
    y4 = y3 + width + t
    y5 = y4 + TUCK
    e, fd = t, width / 2  # dust flaps: one caliper of relief at each body crease, half the width deep

    def dust(xa: float, xb: float, y: float, sign: float) -> list[tuple[float, float]]:
        return [(xa + e, y), (xa + e + DUST_SIDE, y + sign * fd), (xb - e - DUST_SIDE, y + sign * fd), (xb - e, y)]

    def tuck(xa: float, xb: float, y: float, sign: float) -> list[tuple[float, float]]:
        yf = y + sign * TUCK
        return [(xa + t, y), (xa + t, yf - sign * CHAMFER), (xa + t + CHAMFER, yf),
                (xb - t - CHAMFER, yf), (xb - t, yf - sign * CHAMFER), (xb - t, y)]

    bottom = [(x0, y2 + TAPER), (x1, y2), (x2, y2), *dust(x2, x3, y2, -1.0), (x3, y2), (x3, y1),
              *tuck(x3, x4, y1, -1.0), (x4, y1), (x4, y2), *dust(x4, x5, y2, -1.0), (x5, y2)]
    top = [(x5, y3), *dust(x4, x5, y3, 1.0)[::-1], (x4, y3), (x3, y3), *dust(x2, x3, y3, 1.0)[::-1],
           (x2, y3), (x2, y4), *tuck(x1, x2, y4, 1.0)[::-1], (x1, y4), (x1, y3), (x0, y3 - TAPER)]
    contour = bottom + top
    creases = [
        ("glue flap | back", (x1, y2), (x1, y3)),
        ("back | side", (x2, y2), (x2, y3)),
        ("side | front", (x3, y2), (x3, y3)),
        ("front | closing side", (x4, y2), (x4, y3)),
        ("top closure hinge (back)", (x1, y3), (x2, y3)),
        ("top tuck", (x1 + t, y4), (x2 - t, y4)),
        ("bottom closure hinge (front)", (x3, y2), (x4, y2)),
        ("bottom tuck", (x3 + t, y1), (x4 - t, y1)),
        ("top dust flap (side)", (x2 + e, y3), (x3 - e, y3)),
        ("top dust flap (closing side)", (x4 + e, y3), (x5 - e, y3)),
        ("bottom dust flap (side)", (x2 + e, y2), (x3 - e, y2)),
        ("bottom dust flap (closing side)", (x4 + e, y2), (x5 - e, y2)),
    ]
    return contour, creases, {"blank_width": x5, "blank_height": y5}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)

    product = {"width": round(rng.uniform(36, 48), 1), "depth": round(rng.uniform(26, 34), 1),
               "height": round(rng.uniform(105, 135), 1)}
    plan, height = 0.75, 1.5
    caliper_pt = 20
    ticket = {
        "job": "J-24-0917",
        "client": "Maison Verel",
        "item": "Serum 30 ml folding carton",
        "style": "reverse tuck end (ECMA A20.20)",
        "current_revision": "B",
        "product": {
            "description": "30 ml dropper bottle in its pulp insert, as it goes into the carton",
            "outside_mm": product,
            "note": "width = across the front label; depth = front to back; height = base to dropper tip",
        },
        "clearance_mm": {"each_side_in_plan": plan, "total_over_height": height},
        "board": [
            {"revision": "A", "grade": "SBS C1S", "caliper": "14 pt", "status": "superseded"},
            {"revision": "B", "grade": "SBS C1S", "caliper": f"{caliper_pt} pt", "status": "approved",
             "note": "heavier board approved by the client after the drop test"},
        ],
        "print": "outside of the carton (coated side) is the print side",
        "deliverable": "dieline.dxf to the house CAD standard PKG-STD-07",
    }
    (out / "inputs" / "PKG-STD-07.md").write_text(STANDARD)
    (out / "inputs" / "job_ticket.json").write_text(json.dumps(ticket, indent=2) + "\n")

    t = caliper_pt * PT_MM
    inside = {"length": product["width"] + 2 * plan, "width": product["depth"] + 2 * plan,
              "depth": product["height"] + height}
    contour, creases, blank = dieline(inside["length"], inside["width"], inside["depth"], t)
    reference = {
        "canary": CANARY,
        "caliper_mm": round(t, 6),
        "inside_mm": {k: round(v, 4) for k, v in inside.items()},
        "blank_mm": {k: round(v, 4) for k, v in blank.items()},
        "contour": [[round(x, 4), round(y, 4)] for x, y in contour],
        "creases": [{"name": n, "from": [round(a[0], 4), round(a[1], 4)], "to": [round(b[0], 4), round(b[1], 4)]}
                    for n, a, b in creases],
    }
    (out / "reference" / "dieline.json").write_text(json.dumps(reference, indent=1) + "\n")


if __name__ == "__main__":
    main()
