"""Seeded generator of inputs/ and reference/ for motor-adapter-plate: python3 generate.py --out DIR.

inputs/drawing_request.md               the engineer's request: plate, bore, bolt pattern, slots
inputs/iso273_clearance_holes.csv       ISO 273 clearance holes, fine / medium / coarse series
inputs/iso286_hole_limit_deviations.csv ISO 286-2 limit deviations of hole tolerance classes
reference/expected.json                 the drawing's exact geometry, layer by layer
"""

import argparse
import csv
import io
import json
import math
import random
from pathlib import Path

SEED = 40613
CANARY = "fa01ecc3-6b19-4ca4-8ed4-ec79e6547195"
PART = "MAP-2207"

# ISO 273 clearance holes (mm): thread -> (fine, medium, coarse).
ISO273 = {
    "M3": (3.2, 3.4, 3.6), "M4": (4.3, 4.5, 4.8), "M5": (5.3, 5.5, 5.8), "M6": (6.4, 6.6, 7.0),
    "M8": (8.4, 9.0, 10.0), "M10": (10.5, 11.0, 12.0), "M12": (13.0, 13.5, 14.5),
    "M14": (15.0, 15.5, 16.5), "M16": (17.0, 17.5, 18.5), "M20": (21.0, 22.0, 24.0),
}
SERIES = ("fine", "medium", "coarse")

# ISO 286-2 limit deviations of holes (micrometres), lower and upper, per nominal size range
# (over, up to and including).
RANGES = [(10, 18), (18, 30), (30, 50), (50, 80), (80, 120), (120, 180)]
ISO286 = {
    "D9": [(50, 93), (65, 117), (80, 142), (100, 174), (120, 207), (145, 245)],
    "E8": [(32, 59), (40, 73), (50, 89), (60, 106), (72, 126), (85, 148)],
    "F7": [(16, 34), (20, 41), (25, 50), (30, 60), (36, 71), (43, 83)],
    "F8": [(16, 43), (20, 53), (25, 64), (30, 76), (36, 90), (43, 106)],
    "G7": [(6, 24), (7, 28), (9, 34), (10, 40), (12, 47), (14, 54)],
    "H7": [(0, 18), (0, 21), (0, 25), (0, 30), (0, 35), (0, 40)],
    "H8": [(0, 27), (0, 33), (0, 39), (0, 46), (0, 54), (0, 63)],
    "H9": [(0, 43), (0, 52), (0, 62), (0, 74), (0, 87), (0, 100)],
    "JS7": [(-9, 9), (-10.5, 10.5), (-12.5, 12.5), (-15, 15), (-17.5, 17.5), (-20, 20)],
    "K7": [(-12, 6), (-15, 6), (-18, 7), (-21, 9), (-25, 10), (-28, 12)],
    "M7": [(-18, 0), (-21, 0), (-25, 0), (-30, 0), (-35, 0), (-40, 0)],
    "N7": [(-23, -5), (-28, -7), (-33, -8), (-39, -9), (-45, -10), (-52, -12)],
    "P7": [(-29, -11), (-35, -14), (-42, -17), (-51, -21), (-59, -24), (-68, -28)],
}
TOL_MM = 0.001            # the instruction's drafting accuracy
CENTRELINE_OVERSHOOT = 5.0
MARGIN = 4.0              # least web of material between features and to the edge


def mid_deviation_um(fit: str, nominal: float) -> float:
    for (lo, hi), (ei, es) in zip(RANGES, ISO286[fit], strict=True):
        if lo < nominal <= hi:
            return (ei + es) / 2
    raise ValueError(nominal)


def wrong_row_mid_um(fit: str, nominal: float) -> float:
    """The mid-deviation read from the next range up: the trap of a nominal on a boundary."""
    for i, (lo, hi) in enumerate(RANGES):
        if nominal == hi and i + 1 < len(RANGES):
            ei, es = ISO286[fit][i + 1]
            return (ei + es) / 2
    raise ValueError(nominal)


def pick(rng: random.Random) -> dict:
    """A plate whose features all fit with MARGIN of material between them."""
    while True:
        w = rng.randrange(180, 236, 5)
        h = rng.randrange(140, 176, 5)
        fillet = rng.choice([8.0, 10.0, 12.0])
        chamfer = rng.choice([5.0, 6.0, 8.0])
        nominal = rng.choice([30, 50, 80])
        fits = [f for f in sorted(ISO286)
                if abs(mid_deviation_um(f, nominal)) >= 6
                and abs(mid_deviation_um(f, nominal) - wrong_row_mid_um(f, nominal)) >= 5]
        fit = rng.choice(fits)
        bolt = rng.choice(["M5", "M6", "M8"])
        bolt_series = rng.choice(SERIES)
        count = rng.choice([4, 6])
        clocking = rng.choice(["straddle", "on"])
        slot_bolt = rng.choice(["M8", "M10", "M12"])
        slot_series = rng.choice([s for s in SERIES if s != bolt_series])
        travel = rng.choice([5.0, 6.0, 8.0])
        from_right = rng.randrange(int(w * 0.42), int(w * 0.56)) + rng.choice([0.0, 0.5])
        below_top = rng.randrange(int(h * 0.44), int(h * 0.54)) + rng.choice([0.0, 0.5])
        d_bolt = ISO273[bolt][SERIES.index(bolt_series)]
        pcd = float(rng.randrange(int(nominal + 2 * d_bolt + 14), int(nominal + 2 * d_bolt + 30)))
        edge = rng.choice([14.0, 15.0, 16.0, 18.0])
        p = dict(w=float(w), h=float(h), fillet=fillet, chamfer=chamfer, nominal=float(nominal), fit=fit,
                 bolt=bolt, bolt_series=bolt_series, count=count, clocking=clocking, slot_bolt=slot_bolt,
                 slot_series=slot_series, travel=travel, from_right=from_right, below_top=below_top,
                 pcd=pcd, slot_edge=edge)
        if fits_on_plate(derive(p)):
            return p


def derive(p: dict) -> dict:
    w, h = p["w"], p["h"]
    bx, by = w - p["from_right"], h - p["below_top"]
    bore_d = p["nominal"] + mid_deviation_um(p["fit"], p["nominal"]) / 1000
    d_bolt = ISO273[p["bolt"]][SERIES.index(p["bolt_series"])]
    d_slot = ISO273[p["slot_bolt"]][SERIES.index(p["slot_series"])]
    n = p["count"]
    start = 90.0 + (180.0 / n if p["clocking"] == "straddle" else 0.0)
    angles = [(start + k * 360.0 / n) % 360.0 for k in range(n)]
    rp = p["pcd"] / 2
    holes = [(bx + rp * math.cos(math.radians(a)), by + rp * math.sin(math.radians(a))) for a in angles]
    slots = [(p["slot_edge"], by), (w - p["slot_edge"], by)]
    return dict(bx=bx, by=by, bore_d=bore_d, d_bolt=d_bolt, d_slot=d_slot, angles=angles, holes=holes,
                slots=slots, p=p)


def fits_on_plate(g: dict) -> bool:
    p = g["p"]
    w, h, s = p["w"], p["h"], p["travel"]
    rb, rs = g["d_bolt"] / 2, g["d_slot"] / 2
    corner = max(p["fillet"], p["chamfer"]) + MARGIN
    for x, y in g["holes"]:
        if not (rb + MARGIN + 2 <= x <= w - rb - MARGIN - 2 and rb + corner <= y <= h - rb - corner):
            return False
        for sx, sy in g["slots"]:
            dy = max(abs(y - sy) - s, 0.0)
            if math.hypot(x - sx, dy) < rb + rs + MARGIN:
                return False
        if math.hypot(x - g["bx"], y - g["by"]) < rb + g["bore_d"] / 2 + MARGIN:
            return False
    for sx, sy in g["slots"]:
        if not (sy - s - rs >= corner and sy + s + rs <= h - corner):
            return False
    reach = p["pcd"] / 2 + CENTRELINE_OVERSHOOT
    inside = (g["bx"] - reach > 0 and g["bx"] + reach < w and g["by"] - reach > 0 and g["by"] + reach < h)
    return inside and len({round(a, 6) for a in g["angles"]}) == p["count"]


def r9(x: float) -> float:
    return round(x + 0.0, 9)


def pt(x: float, y: float) -> list[float]:
    return [r9(x), r9(y)]


def line(name: str, a: tuple, b: tuple) -> dict:
    return {"name": name, "kind": "line", "p1": pt(*a), "p2": pt(*b)}


def arc(name: str, c: tuple, r: float, a0: float, a1: float) -> dict:
    """Counter-clockwise from a0 to a1 (degrees), with its end points."""
    s = (c[0] + r * math.cos(math.radians(a0)), c[1] + r * math.sin(math.radians(a0)))
    e = (c[0] + r * math.cos(math.radians(a1)), c[1] + r * math.sin(math.radians(a1)))
    return {"name": name, "kind": "arc", "c": pt(*c), "r": r9(r), "start": pt(*s), "end": pt(*e)}


def circle(name: str, c: tuple, r: float) -> dict:
    return {"name": name, "kind": "circle", "c": pt(*c), "r": r9(r)}


def layers(g: dict) -> dict:
    p = g["p"]
    w, h, r, c = p["w"], p["h"], p["fillet"], p["chamfer"]
    outline = [
        line("bottom edge", (c, 0), (w - c, 0)),
        line("bottom right chamfer", (w - c, 0), (w, c)),
        line("right edge", (w, c), (w, h - r)),
        arc("top right fillet", (w - r, h - r), r, 0, 90),
        line("top edge", (w - r, h), (r, h)),
        arc("top left fillet", (r, h - r), r, 90, 180),
        line("left edge", (0, h - r), (0, c)),
        line("bottom left chamfer", (0, c), (c, 0)),
    ]
    holes = [circle("pilot bore", (g["bx"], g["by"]), g["bore_d"] / 2)]
    for k, (x, y) in enumerate(g["holes"], 1):
        holes.append(circle(f"bolt hole {k} at {g['angles'][k - 1]:g} deg", (x, y), g["d_bolt"] / 2))
    rs, s = g["d_slot"] / 2, p["travel"]
    for side, (x, y) in zip(("left", "right"), g["slots"], strict=True):
        holes += [
            line(f"{side} slot, left side", (x - rs, y - s), (x - rs, y + s)),
            line(f"{side} slot, right side", (x + rs, y - s), (x + rs, y + s)),
            arc(f"{side} slot, top end", (x, y + s), rs, 0, 180),
            arc(f"{side} slot, bottom end", (x, y - s), rs, 180, 360),
        ]
    reach = p["pcd"] / 2 + CENTRELINE_OVERSHOOT
    bx, by = g["bx"], g["by"]
    centrelines = [
        circle("pitch circle", (bx, by), p["pcd"] / 2),
        line("horizontal centre line of the bore", (bx - reach, by), (bx + reach, by)),
        line("vertical centre line of the bore", (bx, by - reach), (bx, by + reach)),
    ]
    dimensions = [
        {"name": "overall width", "direction": "horizontal", "from": 0.0, "to": w},
        {"name": "overall height", "direction": "vertical", "from": 0.0, "to": h},
        {"name": "bore centre from the left edge", "direction": "horizontal", "from": 0.0, "to": r9(bx)},
        {"name": "bore centre from the bottom edge", "direction": "vertical", "from": 0.0, "to": r9(by)},
    ]
    return {"OUTLINE": outline, "HOLES": holes, "CENTERLINES": centrelines, "DIMENSIONS": dimensions}


def request(p: dict) -> str:
    n = p["count"]
    clock = ("equally spaced, straddling the vertical centre line (no hole on it; the pattern is "
             "symmetric about it)" if p["clocking"] == "straddle" else
             "equally spaced, one hole on the vertical centre line above the bore")
    return f"""# Drawing request {PART}: motor adapter plate

From: drive-train engineering. To: drafting.

The gear motor of conveyor line 3 is being replaced; the new motor needs an adapter plate cut
from 10 mm S355 plate on the waterjet. Please draw the cutting profile.

| item | requirement |
|---|---|
| plate | {p['w']:g} mm wide x {p['h']:g} mm high overall |
| top corners | both rounded, R{p['fillet']:g} |
| bottom corners | both chamfered {p['chamfer']:g} x 45 deg |
| pilot bore (motor spigot) | Ø{p['nominal']:g} {p['fit']}; centre {p['from_right']:g} mm from the right-hand edge and {p['below_top']:g} mm below the top edge |
| motor bolt holes | {n} x {p['bolt']} through, clearance hole ISO 273 {p['bolt_series']} series, on a {p['pcd']:g} mm pitch circle diameter concentric with the bore, {clock} |
| frame slots | 2 x for {p['slot_bolt']} bolts, width = ISO 273 {p['slot_series']} clearance for {p['slot_bolt']}; vertical (long axis parallel to the side edges); adjustment travel ±{p['travel']:g} mm about the nominal bolt position; nominal bolt positions on the horizontal centre line of the bore, {p['slot_edge']:g} mm in from the left-hand and the right-hand edge |
| material | S355J2, 10 mm, deburr all edges (not drawn) |
| general tolerance | ISO 2768-m |

Orientation: as installed, looking at the motor face; "top" is up.
"""


def iso273_csv() -> str:
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["thread", "fine_mm", "medium_mm", "coarse_mm"])
    for t, (f, m, c) in ISO273.items():
        wr.writerow([t, f"{f:g}", f"{m:g}", f"{c:g}"])
    return buf.getvalue()


def iso286_csv() -> str:
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(["tolerance_class", "over_mm", "up_to_and_including_mm", "lower_deviation_um", "upper_deviation_um"])
    for fit in sorted(ISO286):
        for (lo, hi), (ei, es) in zip(RANGES, ISO286[fit], strict=True):
            wr.writerow([fit, lo, hi, f"{ei:g}", f"{es:g}"])
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = ap.parse_args()
    rng = random.Random(SEED)
    p = pick(rng)
    g = derive(p)
    (args.out / "inputs").mkdir(parents=True, exist_ok=True)
    (args.out / "reference").mkdir(parents=True, exist_ok=True)
    (args.out / "inputs" / "drawing_request.md").write_text(request(p))
    (args.out / "inputs" / "iso273_clearance_holes.csv").write_text(iso273_csv())
    (args.out / "inputs" / "iso286_hole_limit_deviations.csv").write_text(iso286_csv())
    ref = {
        "canary": CANARY,
        "tolerance_mm": TOL_MM,
        "insunits": 4,
        "derived": {
            "bore_centre": pt(g["bx"], g["by"]),
            "bore_diameter": r9(g["bore_d"]),
            "bore_nominal": p["nominal"],
            "bore_wrong_row_diameter": r9(p["nominal"] + wrong_row_mid_um(p["fit"], p["nominal"]) / 1000),
            "bolt_hole_diameter": g["d_bolt"],
            "bolt_nominal_diameter": float(p["bolt"][1:]),
            "bolt_angles_deg": [r9(a) for a in g["angles"]],
            "slot_width": g["d_slot"],
            "slot_travel": p["travel"],
        },
        "layers": layers(g),
    }
    (args.out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1) + "\n")


if __name__ == "__main__":
    main()
