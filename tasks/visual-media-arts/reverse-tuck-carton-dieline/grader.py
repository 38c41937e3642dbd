"""Grader for reverse-tuck-carton-dieline.

dieline.dxf is read with ezdxf; every CUT and CREASE entity is flattened to straight segments
(arcs and bulges to 0.01 mm). The cut segments must chain into one closed contour; contour and
creases are compared with the reference die both ways (every sampled point of one within the
tolerance of the other). A virtual fold reads the crease lines as fold lines, subtracts the board
allowances and compares the carton's inside with the product plus its clearances.
"""

from __future__ import annotations

import numpy as np

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, near, no_problems

MAX_BYTES = 20 * 1024 * 1024
SNAP = 0.01  # mm: the instruction's "ends meet within 0.01 mm"
TOL = 0.2  # mm: the instruction's tolerance on blank size, contour, creases and the folded inside
STEP = 0.1  # mm between sampled points
CRUX_MM = 5.0
MAX_SEGMENTS = 2000  # this die has about 60 rules; round corners flattened to 0.01 mm add ~15 each
MAX_SAMPLES = 5000  # per segment: 500 mm at STEP; longer rules are sampled more coarsely
MAX_RULE_MM = 10000.0  # total cut or crease rule; this carton's die has about 1.5 m of each
FAR_MM = 1e5  # 100 m: no die board comes near; farther geometry is refused before flattening
BLOCK = 2_000_000  # point-segment pairs per vectorised block in distance()
STRAIGHT = {"LINE", "LWPOLYLINE", "POLYLINE", "ARC"}


def read_dxf(path) -> tuple[object | None, str]:
    if not path.is_file():
        return None, "dieline.dxf is missing"
    if path.stat().st_size > MAX_BYTES:
        return None, f"dieline.dxf is over {MAX_BYTES} bytes"
    import ezdxf

    try:
        return ezdxf.readfile(str(path)), "read by ezdxf"
    # ezdxf raises many exception types on damaged files (structure, encoding, value errors);
    # any of them means the die shop cannot read the file either.
    except Exception as e:
        return None, f"not a readable DXF: {type(e).__name__}: {str(e)[:160]}"


def segments_of(entities) -> tuple[np.ndarray, list[str]]:
    from ezdxf import path as dxfpath

    segs, problems = [], []
    for e in entities:
        kind = e.dxftype()
        if kind not in STRAIGHT:
            problems.append(f"{kind} entity {e.dxf.handle} is not a line, polyline or arc")
            continue
        try:
            path = dxfpath.make_path(e)
            # Checked before flattening: an arc of kilometres flattened to 0.01 mm is millions of points.
            ctrl = [(v.x, v.y) for v in path.control_vertices()]
            if not np.isfinite(ctrl).all() or (np.abs(ctrl) > FAR_MM).any():
                problems.append(f"{kind} {e.dxf.handle}: coordinates not finite or beyond {FAR_MM / 1000:.0f} m")
                continue
            pts = [(p.x, p.y) for p in path.flattening(0.01)]
        except Exception as ex:  # ezdxf geometry errors on degenerate entities
            problems.append(f"{kind} {e.dxf.handle}: {type(ex).__name__}")
            continue
        segs += [(a, b) for a, b in zip(pts, pts[1:], strict=False) if np.hypot(b[0] - a[0], b[1] - a[1]) > 1e-9]
        if len(segs) > MAX_SEGMENTS:
            problems.append(f"over {MAX_SEGMENTS} segments on the layer: far beyond a carton die")
            break
    return np.array(segs, dtype=float).reshape(-1, 2, 2), problems


def rule_length(segs: np.ndarray) -> float:
    return float(np.hypot(*(segs[:, 1] - segs[:, 0]).T).sum()) if len(segs) else 0.0


def chain(segs: np.ndarray) -> tuple[np.ndarray | None, str]:
    """The ordered vertices of the one closed contour the segments form, or why they do not."""
    if len(segs) < 3:
        return None, f"{len(segs)} cut segments cannot close a contour"
    if len(segs) > MAX_SEGMENTS or rule_length(segs) > MAX_RULE_MM:
        return None, f"{len(segs)} cut segments, {rule_length(segs):.0f} mm of rule: far beyond a carton die"
    ends = segs.reshape(-1, 2)
    node = np.full(len(ends), -1)
    nodes: list[np.ndarray] = []
    grid: dict[tuple[int, int], list[int]] = {}
    for i, p in enumerate(ends):
        cx, cy = int(np.floor(p[0] / SNAP)), int(np.floor(p[1] / SNAP))
        near_ids = [k for dx in (-1, 0, 1) for dy in (-1, 0, 1) for k in grid.get((cx + dx, cy + dy), [])]
        close = [k for k in near_ids if np.hypot(*(nodes[k] - p)) <= SNAP]
        if close:
            node[i] = close[0]
            continue
        node[i] = len(nodes)
        grid.setdefault((cx, cy), []).append(len(nodes))
        nodes.append(p)
    pairs = node.reshape(-1, 2)
    degree = np.bincount(pairs.ravel(), minlength=len(nodes))
    if (degree != 2).any():
        loose = [np.round(nodes[k], 3).tolist() for k in np.flatnonzero(degree != 2)[:4]]
        return None, f"{int((degree != 2).sum())} contour ends meet no other end or branch, e.g. at {loose}"
    nbrs: dict[int, list[int]] = {}
    for s, (a, b) in enumerate(pairs):
        nbrs.setdefault(int(a), []).append(s)
        nbrs.setdefault(int(b), []).append(s)
    order, used, cur = [int(pairs[0][0])], {0}, int(pairs[0][1])
    while cur != order[0]:
        order.append(cur)
        nxt = [s for s in nbrs[cur] if s not in used]
        if not nxt:
            break
        used.add(nxt[0])
        a, b = pairs[nxt[0]]
        cur = int(b if a == cur else a)
    if len(used) != len(pairs):
        return None, f"the cut segments form {len(pairs) - len(used)} segments beyond the first closed loop"
    return np.array([nodes[k] for k in order]), f"one closed contour of {len(pairs)} segments"


def sample(segs: np.ndarray) -> np.ndarray:
    out = []
    for a, b in segs:
        n = min(MAX_SAMPLES, max(1, int(np.ceil(np.hypot(*(b - a)) / STEP))))
        out.append(a + (b - a) * (np.arange(n + 1)[:, None] / n))
    return np.vstack(out) if out else np.zeros((0, 2))


def distance(points: np.ndarray, segs: np.ndarray) -> np.ndarray:
    """Distance of each point to the nearest of the segments."""
    if len(points) == 0:
        return np.zeros(0)
    if len(segs) == 0:
        return np.full(len(points), np.inf)
    a, ab = segs[:, 0], segs[:, 1] - segs[:, 0]
    ab2 = np.maximum((ab * ab).sum(axis=1), 1e-18)
    best = np.empty(len(points))
    step = max(1, BLOCK // len(segs))  # points x segments in blocks: memory stays bounded
    for i in range(0, len(points), step):
        d = points[i:i + step, None, :] - a[None, :, :]
        u = np.clip((d * ab).sum(axis=2) / ab2, 0.0, 1.0)
        best[i:i + step] = np.hypot(*np.moveaxis(d - u[:, :, None] * ab, 2, 0)).min(axis=1)
    return best


def both_ways(seen: np.ndarray, want: np.ndarray, what: str) -> Outcome:
    stray = float(distance(sample(seen), want).max()) if len(seen) else np.inf
    missed = float(distance(sample(want), seen).max())
    ok = max(stray, missed) <= TOL
    return Outcome(ok, f"{what}: farthest drawn point {stray:.3f} mm from the correct one, farthest correct point "
                   f"{missed:.3f} mm from the drawing", expected=f"both within {TOL} mm",
                   seen=[round(v, 4) if np.isfinite(v) else None for v in (stray, missed)])


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("dieline.json")
    doc, why = read_dxf(ctx.out("dieline.dxf"))
    r.gate("dieline.dxf reads as a DXF drawing", Outcome(doc is not None, why))
    if doc is None:
        return r
    msp = list(doc.modelspace())
    cut, cut_problems = segments_of([e for e in msp if e.dxf.layer.upper() == "CUT"])
    crease, crease_problems = segments_of([e for e in msp if e.dxf.layer.upper() == "CREASE"])
    if len(crease) > MAX_SEGMENTS or rule_length(crease) > MAX_RULE_MM:
        crease_problems.append(f"{len(crease)} crease segments, {rule_length(crease):.0f} mm: far beyond a carton die")
        crease = crease[:0]
    contour, how = chain(cut) if not cut_problems else (None, "; ".join(cut_problems[:3]))
    r.gate("the CUT layer is one closed contour and nothing else", Outcome(contour is not None, how))
    if contour is None:
        return r

    # The standard puts the blank's lower-left corner at the origin; the die is compared there.
    want_cut = np.array(ref["contour"], dtype=float)
    want_cut = np.stack([want_cut, np.roll(want_cut, -1, axis=0)], axis=1)
    drawn_cut = np.stack([contour, np.roll(contour, -1, axis=0)], axis=1)
    # Coarse on purpose (5 mm): any A20.20 blank of about the right size passes, whatever its
    # allowances; a rectangle, another carton style or another scale does not.
    shape = both_ways(drawn_cut, want_cut, "contour")
    r.gate("the cut contour is this job's A20.20 reverse tuck blank (within 5 mm of the die, both ways)",
           Outcome(all(v is not None and v <= CRUX_MM for v in shape.seen), shape.message,
                   expected=f"both within {CRUX_MM} mm", seen=shape.seen))

    r.check("the header declares millimetres ($INSUNITS = 4)", 1,
            near(doc.header.get("$INSUNITS", 0), 4, abs=0))
    others = sorted({e.dxf.layer for e in msp if e.dxf.layer.upper() not in {"CUT", "CREASE", "DIM"}})
    r.check("layers: creases are straight segments on CREASE, nothing outside CUT, CREASE and DIM", 1,
            no_problems(crease_problems + [f"entities on layer {name!r}" for name in others]
                        + ([] if len(crease) else ["no creases on CREASE"]), "CUT and CREASE only"))

    origin = contour.min(axis=0)
    size = contour.max(axis=0) - origin
    blank = ref["blank_mm"]
    r.check("blank size within 0.2 mm", 1, all_of([
        ("width", near(float(size[0]), blank["blank_width"], abs=TOL)),
        ("height", near(float(size[1]), blank["blank_height"], abs=TOL))]))
    r.check("cut contour within 0.2 mm of the die, both ways", 3, shape)

    named = {c["name"]: np.array([[c["from"], c["to"]]], dtype=float) for c in ref["creases"]}

    def group(names: list[str]) -> Outcome:
        return all_of([(n, Outcome(bool(distance(sample(named[n]), crease).max() <= TOL),
                                   f"farthest point {float(distance(sample(named[n]), crease).max()):.3f} mm "
                                   "from any drawn crease", expected=named[n].tolist()))
                       for n in names])

    body = [n for n in named if "|" in n]
    closures = [n for n in named if "closure" in n or "tuck" in n]
    dust = [n for n in named if "dust" in n]
    r.check("body panel creases where the allowances put them (within 0.2 mm)", 2, group(body))
    r.check("reverse tuck closures: hinges on the back top and front bottom, tuck creases (within 0.2 mm)", 2,
            group(closures))
    r.check("dust flap hinges with their relief (within 0.2 mm)", 1, group(dust))
    all_creases = np.vstack(list(named.values()))
    stray = distance(sample(crease), all_creases) if len(crease) else np.zeros(0)
    r.check("no stray creases, and no crease along the cutting rule", 1, all_of([
        ("stray", Outcome(bool(len(stray) and stray.max() <= TOL),
                          f"farthest crease point {float(stray.max()) if len(stray) else 0:.3f} mm from any"
                          " die crease", expected=f"within {TOL} mm")),
        ("on the cut", off_the_cut(crease, drawn_cut))]))
    r.check("virtual fold: the carton's inside is the product plus clearances (within 0.2 mm)", 2,
            virtual_fold(crease, float(contour[:, 0].max()), ref))
    return r


def off_the_cut(crease: np.ndarray, cut: np.ndarray) -> Outcome:
    """Creases end on the cut; away from their ends (0.3 mm) none may run along it."""
    points, owner = [], []
    for k, (a, b) in enumerate(crease):
        length = float(np.hypot(*(b - a)))
        if length <= 0.6:
            continue
        u = np.linspace(0.3 / length, 1 - 0.3 / length, min(MAX_SAMPLES, max(2, int(length / STEP))))
        points.append(a + (b - a) * u[:, None])
        owner += [k] * len(u)
    if not points:
        return no_problems([], "every crease runs inside the blank", expected="no crease along the cut")
    touching = np.unique(np.array(owner)[distance(np.vstack(points), cut) <= 0.05])
    along = [np.round(crease[k], 3).tolist() for k in touching]
    return no_problems(along, "every crease runs inside the blank", expected="no crease along the cut")


def virtual_fold(crease: np.ndarray, right: float, ref: dict) -> Outcome:
    """Fold lines from the drawn creases: the four vertical body creases and the four horizontal
    levels (bottom tuck, bottom hinge, top hinge, top tuck); inside = spacing minus allowance."""
    t, inside = ref["caliper_mm"], ref["inside_mm"]
    vertical = crease[np.abs(crease[:, 0, 0] - crease[:, 1, 0]) < 0.01] if len(crease) else crease
    horizontal = crease[np.abs(crease[:, 0, 1] - crease[:, 1, 1]) < 0.01] if len(crease) else crease
    xs = levels(vertical[:, :, 0].ravel() if len(vertical) else [])
    ys = levels(horizontal[:, :, 1].ravel() if len(horizontal) else [])
    if len(xs) != 4 or len(ys) != 4:
        return Outcome(False, f"{len(xs)} vertical fold lines and {len(ys)} horizontal fold levels",
                       expected="4 and 4", seen=[list(map(float, xs)), list(map(float, ys))])
    x1, x2, x3, x4 = xs
    y1, y2, y3, y4 = ys
    return all_of([
        ("L (back)", near(x2 - x1 - t, inside["length"], abs=TOL)),
        ("W (side)", near(x3 - x2 - t, inside["width"], abs=TOL)),
        ("L (front)", near(x4 - x3 - t, inside["length"], abs=TOL)),
        ("W (closing side)", near(right - x4 - t / 2, inside["width"], abs=TOL)),
        ("D", near(y3 - y2 - t, inside["depth"], abs=TOL)),
        ("W (top closure)", near(y4 - y3 - t, inside["width"], abs=TOL)),
        ("W (bottom closure)", near(y2 - y1 - t, inside["width"], abs=TOL))])


def levels(values) -> list[float]:
    """Distinct coordinates, merged within 0.05 mm."""
    out: list[float] = []
    for v in sorted(float(x) for x in values):
        if not out or v - out[-1] > 0.05:
            out.append(v)
    return out
