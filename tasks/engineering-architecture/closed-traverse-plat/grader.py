"""Grader for closed-traverse-plat.

The adjusted stations, the closure figures and the area are compared with the reference
adjustment; plat.dxf is opened with ezdxf and its boundary and course labels are matched to
the reference courses by geometry, so any layout of the drawing that carries them passes.
"""

from __future__ import annotations

import math
import re

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    equal,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    no_problems,
    rows_by,
)

COLUMNS = ["station", "northing_ftus", "easting_ftus", "latitude", "longitude"]
# The crux: a reduction and adjustment that holds together. Unit blunders, unreduced slope
# distances or a wrong orientation move the corners by feet to thousands of feet.
CRUX_FT = 1.0
MAX_DXF_BYTES = 20_000_000
BEARING = re.compile(r"([NS])\s*(\d{1,2})\D+?(\d{1,2})\D+?(\d{1,2}(?:\.\d+)?)[^EW\d]*([EW])", re.I)
DECIMAL = re.compile(r"(?<![\d.])(\d{1,5}\.\d+)")


def azimuth_of(text: str) -> tuple[float | None, str]:
    m = BEARING.search(text)
    if not m:
        return None, text
    ns, d, mi, s, ew = m.group(1).upper(), int(m.group(2)), int(m.group(3)), float(m.group(4)), m.group(5).upper()
    ang = d + mi / 60 + s / 3600
    az = {("N", "E"): ang, ("S", "E"): 180 - ang, ("S", "W"): 180 + ang, ("N", "W"): 360 - ang}[(ns, ew)]
    return az % 360, text[:m.start()] + " " + text[m.end():]


def read_dxf(path):
    """(polylines on BOUNDARY as vertex lists with closed flag, labels on BRG-DIST as (x, y, text))."""
    try:
        import ezdxf
        if not path.is_file() or path.stat().st_size > MAX_DXF_BYTES:
            return None, Outcome(False, "plat.dxf is missing, not a file or too large")
        doc = ezdxf.readfile(str(path))
        msp = doc.modelspace()
        polys, labels = [], []
        for e in msp.query("LWPOLYLINE POLYLINE"):
            if e.dxf.layer.upper() != "BOUNDARY":
                continue
            if e.dxftype() == "LWPOLYLINE":
                pts = [(float(p[0]), float(p[1])) for p in e.get_points("xy")]
            else:
                pts = [(float(v.dxf.location.x), float(v.dxf.location.y)) for v in e.vertices]
            polys.append((pts, bool(e.closed if e.dxftype() == "LWPOLYLINE" else e.is_closed)))
        for e in msp.query("TEXT MTEXT"):
            if e.dxf.layer.upper() != "BRG-DIST":
                continue
            text = e.plain_text() if e.dxftype() == "MTEXT" else e.dxf.text
            text = text.replace("%%d", "°").replace("%%D", "°")
            labels.append((float(e.dxf.insert.x), float(e.dxf.insert.y), text))
        return (polys, labels), Outcome(True, f"{len(polys)} boundary polylines, {len(labels)} labels")
    except Exception as exc:  # any unreadable drawing is the agent's failure, not the grader's
        return None, Outcome(False, f"plat.dxf does not open as DXF: {type(exc).__name__}: {str(exc)[:200]}")


def boundary_check(dxf, ref_xy: list[tuple[float, float]]) -> Outcome:
    # 0.01 ft: coordinates are asked to 0.001 ft and held to 0.005 ft.
    if dxf is None:
        return Outcome(False, "no drawing")
    polys = dxf[0]
    if len(polys) != 1:
        return Outcome(False, f"{len(polys)} polylines on BOUNDARY", expected=1, seen=len(polys))
    pts, closed = polys[0]
    if pts and math.dist(pts[0], pts[-1]) < 0.01 and len(pts) == len(ref_xy) + 1:
        pts, closed = pts[:-1], True
    problems = []
    if not closed:
        problems.append("polyline is not closed")
    if len(pts) != len(ref_xy):
        problems.append(f"{len(pts)} vertices, expected {len(ref_xy)}")
    for i, (e, n) in enumerate(ref_xy):
        off = min((math.dist((e, n), p) for p in pts), default=math.inf)
        if off > 0.01:
            problems.append(f"station {i + 1} ({e:.3f}, {n:.3f}): nearest vertex {off:.3f} ft away")
    if not problems and not in_loop_order(pts, ref_xy):
        problems.append("vertices not in the order of the loop (either direction, any start): the outline crosses itself")
    return no_problems(problems, f"closed, {len(pts)} vertices on the adjusted stations")


def in_loop_order(pts: list[tuple[float, float]], ref_xy: list[tuple[float, float]]) -> bool:
    """The vertices follow the stations around the loop, clockwise or not, from any start."""
    n = len(ref_xy)
    idx = [min(range(n), key=lambda i, p=p: math.dist(p, ref_xy[i])) for p in pts]
    steps = {(idx[(k + 1) % n] - idx[k]) % n for k in range(n)}
    return sorted(idx) == list(range(n)) and steps in ({1}, {n - 1})


def labels_check(dxf, courses: list[dict]) -> Outcome:
    # 1": bearings are asked to the second and the reference is rounded to it;
    # 0.02 ft: distances to 0.01 ft between corners held to 0.005 ft each.
    if dxf is None:
        return Outcome(False, "no drawing")
    labels = dxf[1]
    problems = []
    for c in courses:
        near_ones = [t for x, y, t in labels if math.hypot(x - c["mid_e"], y - c["mid_n"]) <= 30.0]
        ok = False
        for text in near_ones:
            az, rest = azimuth_of(text)
            nums = [float(v) for v in DECIMAL.findall(rest)]
            if az is None:
                continue
            d_az = abs((az - c["azimuth_deg"] + 180) % 360 - 180) * 3600
            if d_az <= 1.0 + 1e-6 and any(abs(v - c["ground_ft"]) <= 0.02 for v in nums):
                ok = True
                break
        if not ok:
            problems.append(f"{c['from']}->{c['to']}: no label near the midpoint with {c['bearing']} and "
                            f"{c['ground_ft']:.2f} (labels there: {near_ones[:2]})")
    return no_problems(problems, f"{len(courses)} courses labelled")


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    stations = {s["station"]: s for s in ref["stations"]}

    rows, loaded = load_csv(ctx.out("adjusted_coords.csv"), required_columns=COLUMNS)
    r.gate("adjusted_coords.csv has the required columns", loaded)
    seen = rows_by(rows or [], "station")
    r.gate("one row for each traverse station", seen.coverage(list(stations)))
    report, parsed = load_json(ctx.out("report.json"))
    r.gate("report.json parses as a JSON object", parsed)

    crux = []
    for name, s in stations.items():
        e = as_number(get(seen.get(name, {}), "easting_ftus"))
        n = as_number(get(seen.get(name, {}), "northing_ftus"))
        off = math.inf if e is None or n is None else math.hypot(e - s["easting_ftus"], n - s["northing_ftus"])
        crux.append((name, Outcome(off <= CRUX_FT, f"{off:.3f} ft off", expected=f"<= {CRUX_FT} ft",
                                   seen=None if off == math.inf else round(off, 4))))
    r.gate(f"every adjusted station within {CRUX_FT} ft of the reference (reduction and units right)",
           all_of(crux))

    # 0.005 ft: the instruction's tolerance; coordinates asked to 0.001 ft.
    r.check("adjusted grid coordinates (+-0.005 ft)", 4,
            match_rows(seen, stations, ["northing_ftus", "easting_ftus"], abs=0.005))
    # 5e-8 deg (about 5 mm): the grid tolerance plus 8-decimal rounding; a foot-definition
    # mistake (international for US survey) moves the corners by about 1.8 m.
    r.check("NAD83 latitude and longitude (+-5e-8 deg)", 2,
            match_rows(seen, stations, ["latitude", "longitude"], abs=5e-8))
    # 1e-8: the factor is asked to 8 decimals.
    r.check("project combined factor", 1, near(get(report, "combined_factor"), ref["combined_factor"], abs=1e-8))
    # 0.5": angles are booked to the second.
    r.check("angular misclosure", 1,
            near(get(report, "angular_misclosure_sec"), ref["angular_misclosure_sec"], abs=0.5))
    rejected = get(report, "rejected_sets")
    ints = sorted(int(as_number(v)) for v in rejected if as_number(v) is not None) if isinstance(rejected, list) else rejected
    r.check("rejected the disturbed set, and only it", 1, equal(ints, ref["rejected_sets"]))
    # 0.001 ft: the misclosure is asked to 0.001 ft; 5 %: the ratio of a 0.02 ft misclosure
    # moves by a few percent with that rounding; 0.05 ft on a 5 500 ft perimeter.
    r.check("linear misclosure, perimeter and precision ratio", 1, all_of([
        ("linear misclosure", near(get(report, "linear_misclosure_ft"), ref["linear_misclosure_ft"], abs=0.001)),
        ("perimeter", near(get(report, "perimeter_ft"), ref["perimeter_ft"], abs=0.05)),
        ("precision ratio", near(get(report, "precision_ratio"), ref["precision_ratio"], rel=0.05)),
    ]))
    # 25 sq ft: corners held to 0.005 ft on a 5 500 ft perimeter; acres to 4 decimals.
    sqft = as_number(get(report, "area_sqft"))
    r.check("area by coordinates, sq ft and acres", 1, all_of([
        ("area_sqft", near(sqft, ref["area_sqft"], abs=25.0)),
        ("area_acres", near(get(report, "area_acres"), None if sqft is None else sqft / 43560.0, abs=6e-4)),
    ]))

    dxf, opened = read_dxf(ctx.out("plat.dxf"))
    ref_xy = [(s["easting_ftus"], s["northing_ftus"]) for s in ref["stations"]]
    r.check("plat.dxf boundary: one closed polyline through the adjusted stations", 1,
            all_of([("opens", opened), ("boundary", boundary_check(dxf, ref_xy))]))
    r.check("plat.dxf course labels: grid bearing and ground distance at each course", 2,
            all_of([("opens", opened), ("labels", labels_check(dxf, ref["courses"]))]))
    return r
