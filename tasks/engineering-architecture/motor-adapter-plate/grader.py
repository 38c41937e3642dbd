"""Grader for motor-adapter-plate.

plate.dxf is read with ezdxf. Every model-space entity is reduced, per layer, to line segments
and counter-clockwise arcs in world coordinates (polylines and block references are exploded,
arcs with a mirrored extrusion turned round), then collinear segments are joined and arcs of
one centre and radius are merged, so that the drawing is compared independently of entity
order, drawing direction, entity type (a circle or arcs, lines or a polyline) and how a feature
was split. The merged geometry is matched against the exact geometry of the reference.

Tolerances: 0.001 mm on every point and radius, the accuracy the instruction asks for (values
typed to four decimals land within 0.0001 mm; LibreCAD stores doubles). The crux gate is coarse
(0.5 mm on a hole centre, 1 mm on its radius): it asks only whether the hole pattern and the
bore are where the derivation puts them, whatever the layer.
"""

from __future__ import annotations

import math
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, no_problems

MAX_BYTES = 16 * 1024 * 1024  # a plate drawing is tens of kB
MAX_ENTITIES = 5000  # a plate drawing has about a hundred; matching is quadratic in the count
GATE_CENTRE_MM = 0.5
GATE_RADIUS_MM = 1.0
NOISE = 1e-9
CUTTING_LAYERS = ("OUTLINE", "HOLES")


def read_drawing(path: Path):
    if not path.is_file():
        return None, Outcome(False, "plate.dxf is missing or not a regular file")
    size = path.stat().st_size
    if size > MAX_BYTES:
        return None, Outcome(False, f"plate.dxf is {size} bytes, more than a plate drawing can be", seen=size)
    try:
        import ezdxf

        doc = ezdxf.readfile(str(path))
        n = len(doc.modelspace())
    except Exception as e:  # any failure to read agent output is a failed gate, never a crash
        return None, Outcome(False, f"plate.dxf does not read as DXF: {type(e).__name__}: {str(e)[:200]}")
    if n > MAX_ENTITIES:
        return None, Outcome(False, f"{n} model-space entities: not a plate drawing", seen=n)
    return doc, Outcome(True, f"DXF {doc.dxfversion}, {n} model-space entities")


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


def _arc_prim(e, full: bool):
    """('arc', centre, r, a0, sweep): counter-clockwise in world coordinates, degrees."""
    ext = e.dxf.extrusion
    if abs(ext.x) > 1e-9 or abs(ext.y) > 1e-9:
        return None
    c = e.ocs().to_wcs(e.dxf.center)
    r = float(e.dxf.radius)
    if not _finite(c.x, c.y, r) or r <= 0:
        return None
    if full:
        return ("arc", (c.x, c.y), r, 0.0, 360.0)
    sweep = (float(e.dxf.end_angle) - float(e.dxf.start_angle)) % 360.0 or 360.0
    start, end = e.start_point, e.end_point
    if ext.z < 0:  # mirrored: counter-clockwise in the entity's frame is clockwise in the world
        start = end
    a0 = math.degrees(math.atan2(start.y - c.y, start.x - c.x)) % 360.0
    return ("arc", (c.x, c.y), r, a0, sweep)


def collect(doc):
    """layer (upper case) -> {"prims": [...], "dims": [...], "other": [type names]}."""
    layers: dict[str, dict] = {}

    def slot(layer: str) -> dict:
        return layers.setdefault(layer.upper(), {"prims": [], "dims": [], "other": []})

    def walk(entities, parent_layer: str | None, depth: int) -> None:
        for e in entities:
            t = e.dxftype()
            layer = e.dxf.get("layer", "0")
            if parent_layer is not None and layer == "0":
                layer = parent_layer
            prim = None
            try:
                if t == "LINE":
                    s, f = e.dxf.start, e.dxf.end
                    if _finite(s.x, s.y, f.x, f.y):
                        prim = ("line", (s.x, s.y), (f.x, f.y))
                elif t in ("CIRCLE", "ARC"):
                    prim = _arc_prim(e, t == "CIRCLE")
                elif t == "LWPOLYLINE" or (t == "POLYLINE" and e.is_2d_polyline):
                    walk(list(e.virtual_entities()), layer, depth)
                    continue
                elif t == "INSERT" and depth < 4:
                    walk(list(e.virtual_entities()), layer, depth + 1)
                    continue
                elif t == "DIMENSION":
                    slot(layer)["dims"].append(e)
                    continue
            except Exception:  # a malformed entity counts as an unexpected one
                prim = None
            if prim is None:
                slot(layer)["other"].append(t)
            else:
                slot(layer)["prims"].append(prim)

    walk(doc.modelspace(), None, 0)
    return layers


def _merge_intervals(spans: list[list[float]], gap: float) -> list[list[float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + gap:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def merge(prims: list[tuple], tol: float) -> list[dict]:
    """Join collinear segments and arcs of one circle into maximal pieces."""
    items: list[dict] = []
    lines = [p for p in prims if p[0] == "line" and math.dist(p[1], p[2]) > tol]
    groups: list[list[tuple]] = []
    for ln in lines:
        for g in groups:
            (ax, ay), (bx, by) = g[0][1], g[0][2]
            length = math.dist((ax, ay), (bx, by))
            if all(abs((bx - ax) * (py - ay) - (by - ay) * (px - ax)) / length <= tol / 2 for px, py in ln[1:]):
                g.append(ln)
                break
        else:
            groups.append([ln])
    for g in groups:
        (ax, ay), (bx, by) = max(g, key=lambda p: math.dist(p[1], p[2]))[1:]
        length = math.dist((ax, ay), (bx, by))
        ux, uy = (bx - ax) / length, (by - ay) / length
        spans = [sorted(((px - ax) * ux + (py - ay) * uy) for px, py in p[1:]) for p in g]
        for t0, t1 in _merge_intervals(spans, tol):
            items.append({"kind": "line", "p1": (ax + t0 * ux, ay + t0 * uy), "p2": (ax + t1 * ux, ay + t1 * uy)})
    circles: list[list[tuple]] = []
    for a in (p for p in prims if p[0] == "arc"):
        for g in circles:
            if math.dist(g[0][1], a[1]) <= tol and abs(g[0][2] - a[2]) <= tol:
                g.append(a)
                break
        else:
            circles.append([a])
    for g in circles:
        (cx, cy), r = g[0][1], g[0][2]
        spans = []
        for _, _, _, a0, sweep in g:
            a1 = a0 + sweep
            spans += [[a0, min(a1, 360.0)]] + ([[0.0, a1 - 360.0]] if a1 > 360.0 else [])
        pieces = _merge_intervals(spans, math.degrees(tol / r))
        if len(pieces) == 1 and pieces[0][0] <= math.degrees(tol / r) and pieces[0][1] >= 360 - math.degrees(tol / r):
            items.append({"kind": "circle", "c": (cx, cy), "r": r})
            continue
        if len(pieces) > 1 and pieces[0][0] <= 0.0 and pieces[-1][1] >= 360.0:
            pieces[0] = [pieces[-1][0], pieces[0][1] + 360.0]
            pieces.pop()
        for a0, a1 in pieces:
            def at(a: float) -> tuple[float, float]:
                return (cx + r * math.cos(math.radians(a)), cy + r * math.sin(math.radians(a)))
            items.append({"kind": "arc", "c": (cx, cy), "r": r, "start": at(a0), "end": at(a1)})
    return items


def same(exp: dict, seen: dict, tol: float) -> bool:
    if exp["kind"] != seen["kind"]:
        return False
    if exp["kind"] == "line":
        fwd = max(math.dist(exp["p1"], seen["p1"]), math.dist(exp["p2"], seen["p2"]))
        rev = max(math.dist(exp["p1"], seen["p2"]), math.dist(exp["p2"], seen["p1"]))
        return min(fwd, rev) <= tol + NOISE
    ok = math.dist(exp["c"], seen["c"]) <= tol + NOISE and abs(exp["r"] - seen["r"]) <= tol + NOISE
    if exp["kind"] == "arc":
        ok = ok and math.dist(exp["start"], seen["start"]) <= tol + NOISE and math.dist(exp["end"], seen["end"]) <= tol + NOISE
    return ok


def describe(item: dict) -> str:
    f = lambda p: f"({p[0]:.4f}, {p[1]:.4f})"  # noqa: E731
    if item["kind"] == "line":
        return f"line {f(item['p1'])}-{f(item['p2'])}"
    if item["kind"] == "circle":
        return f"circle centre {f(item['c'])} r {item['r']:.4f}"
    return f"arc centre {f(item['c'])} r {item['r']:.4f} from {f(item['start'])} to {f(item['end'])}"


def features(expected: list[dict], seen: list[dict], tol: float, label: str) -> Outcome:
    """Every expected feature has an equal one among the merged geometry of the layer."""
    missing = [f"{e['name']}: no {describe(e)}" for e in expected if not any(same(e, s, tol) for s in seen)]
    if missing:
        return Outcome(False, f"{label}: {len(missing)} of {len(expected)} features missing or off by more than {tol} mm",
                       expected=[f"{e['name']}: {describe(e)}" for e in expected][:8], seen=missing[:6])
    return Outcome(True, f"{label}: all {len(expected)} features within {tol} mm")


def exact_layer(name: str, expected: list[dict], seen: list[dict], found: dict, tol: float) -> Outcome:
    """The layer holds the expected features and nothing else: a cutting layer is cut whole."""
    other = found["other"] + ["DIMENSION"] * len(found["dims"])
    problems = [f"missing: {e['name']}" for e in expected if not any(same(e, s, tol) for s in seen)]
    problems += [f"not asked for: {describe(s)}" for s in seen if not any(same(e, s, tol) for e in expected)]
    problems += [f"not asked for: a {t} entity" for t in other]
    return no_problems(problems, f"{name} holds exactly the {len(expected)} features asked for")


def circle_near(items: list[dict], centre: list[float], r: float, dc: float, dr: float) -> dict | None:
    best = [s for s in items if s["kind"] == "circle" and math.dist(s["c"], centre) <= dc and abs(s["r"] - r) <= dr]
    return min(best, key=lambda s: math.dist(s["c"], centre), default=None)


def dimension_ok(dims: list, want: dict, tol: float) -> Outcome:
    """A linear (or aligned) DIMENSION along the wanted axis between the wanted coordinates,
    its text the measured value."""
    axis = 0 if want["direction"] == "horizontal" else 1
    seen = []
    for d in dims:
        try:
            kind = d.dxf.dimtype & 7
            p1, p2 = d.dxf.defpoint2, d.dxf.defpoint3
            if kind == 0:
                a = math.radians(float(d.dxf.get("angle", 0.0)))
                u = (math.cos(a), math.sin(a))
            elif kind == 1 and math.dist((p1.x, p1.y), (p2.x, p2.y)) > tol:
                length = math.dist((p1.x, p1.y), (p2.x, p2.y))
                u = ((p2.x - p1.x) / length, (p2.y - p1.y) / length)
            else:
                continue
            text = (d.dxf.get("text", "") or "").strip()
        except Exception:
            continue
        ends = sorted([(p1.x, p1.y)[axis], (p2.x, p2.y)[axis]])
        seen.append(f"{'horizontal' if abs(u[0]) > abs(u[1]) else 'vertical'} {ends[0]:.4f} to {ends[1]:.4f}")
        along = abs(u[axis]) >= 1 - 1e-9
        between = abs(ends[0] - want["from"]) <= tol + NOISE and abs(ends[1] - want["to"]) <= tol + NOISE
        measured = text in ("", "<>") or "<>" in text
        if along and between and measured:
            return Outcome(True, f"{want['direction']} dimension {want['to'] - want['from']:g}")
    return Outcome(False, f"no {want['direction']} DIMENSION from {want['from']:g} to {want['to']:g} with its measured text", expected=f"{want['direction']} {want['from']:g} to {want['to']:g}",
                   seen=seen[:6] or None)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    tol = ref["tolerance_mm"]
    want = ref["layers"]
    dv = ref["derived"]

    doc, read = read_drawing(ctx.out("plate.dxf"))
    layers = collect(doc) if doc is not None else {}
    n_prims = sum(len(v["prims"]) for v in layers.values())
    if n_prims > MAX_ENTITIES:  # polylines and blocks exploded
        doc, layers = None, {}
        read = Outcome(False, f"{n_prims} lines and arcs once polylines and blocks are exploded: not a plate drawing",
                       seen=n_prims)
    r.gate("plate.dxf reads as a DXF drawing", read)
    merged = {name: merge(v["prims"], tol) for name, v in layers.items()}
    everywhere = [s for items in merged.values() for s in items]
    empty = {"prims": [], "dims": [], "other": []}

    # The crux, coarse and on any layer: the bolt holes sit on the pitch circle at the clocking
    # the request asks for, and the bore where its location puts it.
    bolts = [e for e in want["HOLES"] if e["name"].startswith("bolt hole")]
    bore = next(e for e in want["HOLES"] if e["name"] == "pilot bore")
    r.gate("bolt-hole pattern and pilot bore at their derived centres (0.5 mm, any layer)", all_of([
        (e["name"], Outcome(circle_near(everywhere, e["c"], e["r"], GATE_CENTRE_MM, GATE_RADIUS_MM) is not None,
                            "found" if circle_near(everywhere, e["c"], e["r"], GATE_CENTRE_MM, GATE_RADIUS_MM)
                            else "no circle there", expected=describe(e)))
        for e in [bore, *bolts]
    ]))

    outline = merged.get("OUTLINE", [])
    holes = merged.get("HOLES", [])
    straight = [e for e in want["OUTLINE"] if e["kind"] == "line"]
    fillets = [e for e in want["OUTLINE"] if e["kind"] == "arc"]
    r.check("OUTLINE: plate edges and corner chamfers", 2, features(straight, outline, tol, "OUTLINE edges"))
    r.check("OUTLINE: tangent corner fillets at the stated radius", 1, features(fillets, outline, tol, "OUTLINE fillets"))
    r.check("OUTLINE holds one closed profile and nothing else", 1,
            exact_layer("OUTLINE", want["OUTLINE"], outline, layers.get("OUTLINE", empty), tol))

    centres = []
    for e in bolts:
        found = circle_near(holes, e["c"], e["r"], tol, GATE_RADIUS_MM)
        centres.append((e["name"], Outcome(found is not None, "centre within tolerance" if found else "no circle centred there",
                                           expected=describe(e))))
    r.check("HOLES: bolt holes on the pitch circle at the requested clocking", 2, all_of(centres))
    sizes = []
    for e in bolts:
        found = circle_near(holes, e["c"], e["r"], GATE_CENTRE_MM, GATE_RADIUS_MM)
        sizes.append((e["name"], Outcome(found is not None and abs(found["r"] * 2 - dv["bolt_hole_diameter"]) <= 2 * tol + NOISE,
                                         "diameter" if found else "no hole", expected=dv["bolt_hole_diameter"],
                                         seen=round(found["r"] * 2, 6) if found else None)))
    r.check("HOLES: bolt holes sized to the ISO 273 series requested", 2, all_of(sizes))
    found = circle_near(holes, bore["c"], bore["r"], GATE_CENTRE_MM, GATE_RADIUS_MM)
    seen_d = round(found["r"] * 2, 6) if found else None
    bore_ok = found is not None and same(bore, found, tol)
    note = ("at the middle of the tolerance zone" if bore_ok else "no bore on HOLES" if found is None
            else "drawn at the nominal size" if abs(seen_d - dv["bore_nominal"]) <= 2 * tol
            else "deviations read from the wrong size range" if abs(seen_d - dv["bore_wrong_row_diameter"]) <= 2 * tol
            else "centre or diameter off")
    r.check("HOLES: pilot bore at the middle of its ISO 286 tolerance zone", 3,
            Outcome(bore_ok, note, expected=describe(bore), seen=describe(found) if found else None))
    slots = [e for e in want["HOLES"] if "slot" in e["name"]]
    r.check("HOLES: adjustment slots (width, travel and position)", 2, features(slots, holes, tol, "slots"))
    r.check("HOLES holds the holes, bore and slots and nothing else", 1,
            exact_layer("HOLES", want["HOLES"], holes, layers.get("HOLES", empty), tol))

    r.check("CENTERLINES: pitch circle and the bore's centre lines", 1,
            features(want["CENTERLINES"], merged.get("CENTERLINES", []), tol, "CENTERLINES"))
    dims = layers.get("DIMENSIONS", empty)["dims"]
    r.check("DIMENSIONS: overall width and height", 1, all_of([
        (d["name"], dimension_ok(dims, d, tol)) for d in want["DIMENSIONS"] if d["name"].startswith("overall")]))
    r.check("DIMENSIONS: bore centre located from the left and bottom edges", 1, all_of([
        (d["name"], dimension_ok(dims, d, tol)) for d in want["DIMENSIONS"] if d["name"].startswith("bore")]))
    units = doc.header.get("$INSUNITS") if doc is not None else None
    why = " (DXF R12 has no units header)" if doc is not None and doc.dxfversion == "AC1009" else ""
    r.check("drawing units are millimetres ($INSUNITS = 4)", 1,
            Outcome(units == ref["insunits"], f"$INSUNITS = {units}{why}", expected=ref["insunits"], seen=units))
    return r
