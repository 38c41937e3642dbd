"""Grader for magazine-ad-mechanical.

The SVG is parsed for its structure (page size, layers, styles, text anchors) and measured by
Inkscape itself (`inkscape --query-all`: the bounding box of every object in page coordinates,
after every transform, whatever the units or the element types). The crux, the grid arithmetic,
is a gate: both panels must sit within 5 mm of where the grid puts them, so a layout by eye or a
template without the boxes earns nothing; the precise checks then ask for 0.2 mm.

Tolerances: page size 0.05 mm (unit conversions of an exact size, e.g. to inches, round at
1e-5 mm); box and logo edges 0.2 mm (Inkscape's X/Y/W/H fields show 0.001 mm, and 0.2 mm is well
inside the 0.5 mm a printer's trim and registration wander); logo proportions 0.5 %; text
baseline 0.5 mm and left edge 1.0 mm (a text placed by its bounding box instead of its anchor is
off by the first glyph's side bearing, under 1 mm at these sizes); type size 0.1 pt; colours
exact to one step of 255 per channel.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from lastexam.grading import GradeContext, Outcome, Rubric, all_of, equal, load_xml, near

SVG = "{http://www.w3.org/2000/svg}"
INK = "{http://www.inkscape.org/namespaces/inkscape}"
SODI = "{http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd}"
FILE = "ad.svg"
MAX_BYTES = 16 * 1024 * 1024
PX_MM = 25.4 / 96
USER_PER = {"": 1.0, "px": 1.0, "mm": 96 / 25.4, "cm": 96 / 2.54, "in": 96.0, "pt": 4 / 3, "pc": 16.0}
SHAPES = {"rect", "path", "circle", "ellipse", "polygon", "polyline", "line", "image", "use", "text"}
NOT_DRAWN = {"defs", "clipPath", "mask", "symbol", "marker", "pattern", "metadata", "title", "desc"}
INHERITED = {"fill", "font-family", "font-size", "font-weight", "text-anchor", "visibility"}
NAMED = {"white": "#FFFFFF", "black": "#000000"}
GATE_MM, BOX_MM, PAGE_MM, ASPECT_REL = 5.0, 0.2, 0.05, 0.005
ANCHOR_X_MM, BASELINE_MM, SIZE_PT, SHAPE_REL = 1.0, 0.5, 0.1, 0.01
NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([a-z%]*)\s*$")


def tag(el: ET.Element) -> str:
    return el.tag.split("}")[-1] if isinstance(el.tag, str) else ""


def length(text: str | None, *, percent_of: float | None = None) -> float | None:
    """A length in user units (CSS px), or None."""
    m = NUM.match(text or "")
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    if unit == "%" and percent_of is not None:
        return value / 100 * percent_of
    factor = USER_PER.get(unit)
    return value * factor if factor is not None and math.isfinite(value) else None


def transform(text: str | None) -> tuple[float, ...]:
    """The matrix (a, b, c, d, e, f) of an SVG transform list; identity when absent or unreadable."""
    m = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    for name, args in re.findall(r"(matrix|translate|scale|rotate|skewX|skewY)\s*\(([^)]*)\)", text or ""):
        try:
            v = [float(a) for a in re.split(r"[\s,]+", args.strip()) if a]
        except ValueError:
            continue
        if not all(map(math.isfinite, v)):
            continue
        if name == "matrix" and len(v) == 6:
            t = tuple(v)
        elif name == "translate" and v:
            t = (1, 0, 0, 1, v[0], v[1] if len(v) > 1 else 0)
        elif name == "scale" and v:
            t = (v[0], 0, 0, v[1] if len(v) > 1 else v[0], 0, 0)
        elif name == "rotate" and v:
            a = math.radians(v[0])
            cx, cy = (v[1], v[2]) if len(v) == 3 else (0, 0)
            c, s = math.cos(a), math.sin(a)
            t = (c, s, -s, c, cx - c * cx + s * cy, cy - s * cx - c * cy)
        elif name in ("skewX", "skewY") and v:
            k = math.tan(math.radians(v[0]))
            t = (1, 0, k, 1, 0, 0) if name == "skewX" else (1, k, 0, 1, 0, 0)
        else:
            continue
        m = multiply(m, t)
    return m


def multiply(m: tuple[float, ...], n: tuple[float, ...]) -> tuple[float, ...]:
    a, b, c, d, e, f = m
    return (a * n[0] + c * n[1], b * n[0] + d * n[1], a * n[2] + c * n[3], b * n[2] + d * n[3],
            a * n[4] + c * n[5] + e, b * n[4] + d * n[5] + f)


def declared(el: ET.Element) -> dict[str, str]:
    props = {k: v.strip() for k, v in el.attrib.items() if "}" not in k}
    for part in (el.get("style") or "").split(";"):
        if ":" in part:
            k, v = part.split(":", 1)
            props[k.strip().lower()] = v.strip()
    return props


def colour(value: str | None) -> str | None:
    v = (value or "").strip().lower()
    if v in NAMED:
        return NAMED[v]
    if re.fullmatch(r"#[0-9a-f]{3}", v):
        return "#" + "".join(ch * 2 for ch in v[1:]).upper()
    if re.fullmatch(r"#[0-9a-f]{6}(ff)?", v):
        return v[:7].upper()
    m = re.fullmatch(r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)", v)
    if m and all(int(g) <= 255 for g in m.groups()):
        return "#" + "".join(f"{int(g):02X}" for g in m.groups())
    return None


def same_colour(seen: str | None, expected: str) -> bool:
    if seen is None:
        return False
    return all(abs(int(seen[i:i + 2], 16) - int(expected[i:i + 2], 16)) <= 1 for i in (1, 3, 5))


class Doc:
    """The parsed SVG: parents, computed styles, transforms, and Inkscape's measurements."""

    def __init__(self, root: ET.Element) -> None:
        self.root = root
        self.parent = {c: p for p in root.iter() for c in p}
        self.boxes: dict[str, tuple[float, float, float, float]] = {}
        try:
            vb = [float(v) for v in re.split(r"[\s,]+", (root.get("viewBox") or "").strip()) if v]
        except ValueError:
            vb = []
        vb = vb if len(vb) == 4 and all(map(math.isfinite, vb)) else []
        w_uu = length(root.get("width", "100%"), percent_of=vb[2] if vb else None)
        h_uu = length(root.get("height", "100%"), percent_of=vb[3] if vb else None)
        self.page_mm = (w_uu * PX_MM, h_uu * PX_MM) if w_uu and h_uu else None
        self.viewbox = vb if len(vb) == 4 and vb[2] > 0 and vb[3] > 0 else None
        self.scale: tuple[float, float] | None = None
        if self.page_mm and self.viewbox:
            self.scale = (self.page_mm[0] / self.viewbox[2], self.page_mm[1] / self.viewbox[3])
        elif self.page_mm:
            self.scale = (PX_MM, PX_MM)

    def chain(self, el: ET.Element) -> list[ET.Element]:
        out = [el]
        while out[-1] in self.parent:
            out.append(self.parent[out[-1]])
        return out

    def prop(self, el: ET.Element, name: str) -> str | None:
        for node in self.chain(el):
            value = declared(node).get(name)
            if value is not None and value != "inherit":
                return value
            if name not in INHERITED:
                return None
        return None

    def drawn(self, el: ET.Element) -> bool:
        return not any(tag(n) in NOT_DRAWN or declared(n).get("display") == "none" for n in self.chain(el)) \
            and self.prop(el, "visibility") not in ("hidden", "collapse")

    def ctm(self, el: ET.Element) -> tuple[float, ...]:
        m = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
        for node in reversed(self.chain(el)[:-1]):  # the root's own transform is not SVG 1.1
            m = multiply(m, transform(node.get("transform")))
        return m

    def to_mm(self, m: tuple[float, ...], x: float, y: float) -> tuple[float, float] | None:
        if not self.scale:
            return None
        ox, oy = (self.viewbox[0], self.viewbox[1]) if self.viewbox else (0.0, 0.0)
        ux, uy = m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]
        return (ux - ox) * self.scale[0], (uy - oy) * self.scale[1]

    def font_size_uu(self, el: ET.Element) -> float | None:
        for node in self.chain(el):
            v = declared(node).get("font-size")
            if v is None or v == "inherit":
                continue
            m = NUM.match(v)
            if m and m.group(2) in ("em", "%"):
                parent = self.font_size_uu(self.parent[node]) if node in self.parent else 16.0
                f = float(m.group(1)) / (100 if m.group(2) == "%" else 1)
                return parent * f if parent else None
            return length(v)
        return 16.0

    def shapes(self, layer: ET.Element | None) -> list[ET.Element]:
        if layer is None:
            return []
        return [e for e in layer.iter() if tag(e) in SHAPES and e is not layer and self.drawn(e)
                and not any(tag(a) == "text" for a in self.chain(e)[1:])]

    def box(self, el: ET.Element | None) -> list[float] | None:
        b = self.boxes.get(el.get("id", "")) if el is not None else None
        return [v * PX_MM for v in b] if b else None


def measure(doc: Doc, scratch: Path, name: str) -> Outcome:
    """Give every element an id of its own, save a copy, and have Inkscape measure it."""
    seen: set[str] = set()
    for i, el in enumerate(doc.root.iter()):
        if not isinstance(el.tag, str):
            continue
        ident = el.get("id")
        if not ident or ident in seen or "," in ident:
            el.set("id", f"grader-auto-{i}")
        seen.add(el.get("id"))
    copy = scratch / name
    copy.write_bytes(ET.tostring(doc.root))
    home = scratch / "inkscape-home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    try:
        run = subprocess.run(["inkscape", "--query-all", str(copy)], capture_output=True, text=True,
                             timeout=120, env=env, cwd=scratch)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Outcome(False, f"inkscape --query-all failed: {e}")
    for line in run.stdout.splitlines():
        parts = line.rsplit(",", 4)
        try:
            doc.boxes[parts[0]] = tuple(float(v) for v in parts[1:])  # type: ignore[assignment]
        except (ValueError, IndexError):
            continue
    ok = run.returncode == 0 and bool(doc.boxes)
    return Outcome(ok, f"Inkscape measured {len(doc.boxes)} objects" if ok else
                   f"inkscape --query-all exit {run.returncode}: {run.stderr[-300:]}")


def parse(path: Path) -> tuple[ET.Element | None, Outcome]:
    return load_xml(path, root=SVG + "svg", kind="SVG", limit=MAX_BYTES, max_unpacked=MAX_BYTES)


def layers(doc: Doc) -> dict[str, tuple[int, ET.Element]]:
    found: dict[str, tuple[int, ET.Element]] = {}
    for i, el in enumerate(doc.root):
        if tag(el) == "g" and el.get(INK + "groupmode") == "layer":
            found.setdefault((el.get(INK + "label") or "").strip().casefold(), (i, el))
    return found


def edges_off(box: list[float] | None, want: list[float]) -> float:
    """The largest distance between an edge of box and the same edge of want (x, y, w, h), in mm."""
    if not box:
        return math.inf
    a = (box[0], box[1], box[0] + box[2], box[1] + box[3])
    b = (want[0], want[1], want[0] + want[2], want[1] + want[3])
    return max(abs(p - q) for p, q in zip(a, b, strict=True))


def fill_of(doc: Doc, el: ET.Element | None) -> str | None:
    return colour(doc.prop(el, "fill") or "black") if el is not None else None


def first_length(value: str | None) -> float | None:
    parts = (value or "").replace(",", " ").split()
    return length(parts[0]) if parts else None


def text_facts(doc: Doc, el: ET.Element) -> dict:
    spans = [el, *(t for t in el.iter() if tag(t) == "tspan")]
    first = next((t for t in spans if (t.text or "").strip()), el)
    # Inkscape lays out the lines of a text (tspans with sodipodi:role="line") from the text's own
    # x and y and rewrites the tspans' copies only when it re-flows them: the text's position rules.
    first_span = spans[1] if len(spans) > 1 else None
    if first_span is not None and first_span.get(SODI + "role") == "line" and el.get("x") is not None:
        anchor_el = el
    else:
        anchor_el = next((t for t in spans[1:] if t.get("x") is not None and t.get("y") is not None), el)
    x, y = first_length(anchor_el.get("x")), first_length(anchor_el.get("y"))
    m = doc.ctm(anchor_el)
    at = doc.to_mm(m, x, y) if x is not None and y is not None else None
    size_uu = doc.font_size_uu(first)
    fm = doc.ctm(first)
    scale = math.sqrt(abs(fm[0] * fm[3] - fm[1] * fm[2]))
    size_pt = size_uu * scale * doc.scale[0] / (25.4 / 72) if size_uu and doc.scale else None
    family = (doc.prop(first, "font-family") or "").split(",")[0].strip().strip("'\"")
    # Inkscape picks the face by its own -inkscape-font-specification where one is declared
    # ('DejaVu Sans Book' on a tspan inside a bold text renders Book), else by font-weight.
    face = next((d for n in doc.chain(first) if (d := declared(n)).get("font-weight")
                 or d.get("-inkscape-font-specification")), {})
    spec = face.get("-inkscape-font-specification", "").lower()
    weight = face.get("font-weight", "normal").lower()
    bold = any(w in spec for w in ("bold", "heavy", "black")) if spec else \
        weight in ("bold", "bolder", "600", "700", "800", "900")
    return {"anchor": at, "size_pt": size_pt, "family": family,
            "bold": bold,
            "fill": fill_of(doc, first), "align": doc.prop(first, "text-anchor") or "start"}


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    root, parsed = parse(ctx.out(FILE))
    r.gate(f"{FILE} is an SVG document", parsed)
    doc = Doc(root if root is not None else ET.Element(SVG + "svg"))
    measured = measure(doc, ctx.scratch, "ad.svg") if root is not None else Outcome(False, "no SVG")
    r.gate("Inkscape opens and measures the artwork", measured)

    found = layers(doc)
    layer = {name: found.get(name.casefold(), (None, None))[1] for name in ref["layers"]}
    panel_els = doc.shapes(layer["Panels"])
    panels = {}
    for name, want in ref["panels"].items():
        best = min(panel_els, key=lambda e, w=want: edges_off(doc.box(e), w["box_mm"]), default=None)
        panels[name] = (best, edges_off(doc.box(best), want["box_mm"]))
    r.gate("image well and offer panel on the grid (within 5 mm) in layer Panels", all_of(
        {name: Outcome(off <= GATE_MM, f"nearest box edge off by {off:.2f} mm",
                       expected=ref["panels"][name]["box_mm"], seen=doc.box(el))
         for name, (el, off) in panels.items()}))

    pw, ph = ref["page_mm"]
    uniform = doc.scale is not None and abs(doc.scale[0] - doc.scale[1]) <= 1e-4 * doc.scale[0]
    r.check("page is the trim plus bleed, in mm, with uniform user units", 2, all_of({
        "width": near(doc.page_mm[0] if doc.page_mm else None, pw, abs=PAGE_MM),
        "height": near(doc.page_mm[1] if doc.page_mm else None, ph, abs=PAGE_MM),
        "uniform viewBox scale": Outcome(uniform, "uniform" if uniform else "non-uniform or no size"),
    }))

    bg_els = doc.shapes(layer["Background"])
    bg = min(bg_els, key=lambda e: edges_off(doc.box(e), [0, 0, pw, ph]), default=None)
    bg_off = edges_off(doc.box(bg), [0, 0, pw, ph])
    r.check("background fills the bleed box in the brand colour", 2, all_of({
        "extent": Outcome(bg_off <= BOX_MM, f"edges off by {bg_off:.3f} mm", expected=[0, 0, pw, ph],
                          seen=doc.box(bg)),
        "fill": Outcome(same_colour(fill_of(doc, bg), ref["background_fill"]), "fill",
                        expected=ref["background_fill"], seen=fill_of(doc, bg)),
    }))

    r.check("panels exactly on the grid (0.2 mm)", 3, all_of({
        name: Outcome(off <= BOX_MM, f"edges off by {off:.3f} mm", expected=ref["panels"][name]["box_mm"],
                      seen=doc.box(el)) for name, (el, off) in panels.items()}))
    r.check("panel colours from the brand palette (sRGB)", 1, all_of({
        name: Outcome(same_colour(fill_of(doc, el), ref["panels"][name]["fill"]), "fill",
                      expected=ref["panels"][name]["fill"], seen=fill_of(doc, el))
        for name, (el, _) in panels.items()}))

    logo_box, want = doc.box(layer["Logo"]), ref["logo_box_mm"]
    aspect = logo_box[2] / logo_box[3] if logo_box and logo_box[3] > 0 else None
    r.check("logo one column wide, proportions kept, bottom-right of the live area", 3, all_of({
        "edges": Outcome(edges_off(logo_box, want) <= BOX_MM,
                         f"edges off by {edges_off(logo_box, want):.3f} mm", expected=want, seen=logo_box),
        "proportions": near(aspect, want[2] / want[3], rel=ASPECT_REL),
    }))
    r.check("logo is the supplied artwork, reversed to Paper White", 2,
            logo_artwork(doc, layer["Logo"], logo_box, ctx, ref["logo_fill"]))

    text_els = [e for e in doc.shapes(layer["Text"]) if tag(e) == "text"]
    by_content = {" ".join("".join(e.itertext()).split()): e for e in reversed(text_els)}
    for name, weight in (("headline", 2), ("legal line", 1)):
        want = ref["texts"][name]
        el = by_content.get(want["content"])
        facts = text_facts(doc, el) if el is not None else {}
        parts = {
            "text present in layer Text": Outcome(el is not None, "found" if el is not None else "missing",
                                                  expected=want["content"], seen=sorted(by_content)[:6]),
            "family": equal(facts.get("family", "").casefold(), want["family"].casefold()),
            "weight": equal(facts.get("bold"), want["bold"]),
            "size (pt)": near(facts.get("size_pt"), want["size_pt"], abs=SIZE_PT),
            "colour": Outcome(same_colour(facts.get("fill"), want["fill"]), "fill", want["fill"], facts.get("fill")),
            "left-aligned": equal(facts.get("align"), "start"),
        }
        anchor = facts.get("anchor")
        placed = {
            "left edge": near(anchor[0] if anchor else None, want["anchor_mm"][0], abs=ANCHOR_X_MM),
            "baseline": near(anchor[1] if anchor else None, want["anchor_mm"][1], abs=BASELINE_MM),
        }
        if name == "headline":
            r.check("headline text, font, weight, size and colour", weight, all_of(parts))
            r.check("headline placed in the offer panel (anchor and baseline)", 1, all_of(placed))
        else:
            r.check("legal line text, type and placement", weight, all_of({**parts, **placed}))

    order = [found.get(n.casefold(), (None, None))[0] for n in ref["layers"]]
    r.check("four layers named as the brief, stacked Background to Text", 1, all_of({
        "all present": Outcome(None not in order, "layers by label", expected=ref["layers"], seen=sorted(found)),
        "stacking order": Outcome(None not in order and order == sorted(order), "document order",
                                  expected=ref["layers"], seen=order),
    }))
    lx0, ly0, lx1, ly1 = ref["live_box_mm"]
    outside = [e.get("id") for name in ("Panels", "Logo", "Text") for e in doc.shapes(layer[name])
               if (b := doc.box(e)) is None or b[0] < lx0 - BOX_MM or b[1] < ly0 - BOX_MM
               or b[0] + b[2] > lx1 + BOX_MM or b[1] + b[3] > ly1 + BOX_MM]
    inside_count = sum(len(doc.shapes(layer[n])) for n in ("Panels", "Logo", "Text"))
    r.check("panels, logo and type inside the live area", 1, Outcome(
        inside_count > 0 and not outside, f"{len(outside)} of {inside_count} objects outside the live area",
        expected=ref["live_box_mm"], seen=outside[:6]))
    return r


def logo_artwork(doc: Doc, layer: ET.Element | None, box: list[float] | None, ctx: GradeContext,
                 white: str) -> Outcome:
    """The logo layer's shapes against logo.svg's, each as a box relative to the whole logo."""
    src, ok = parse(ctx.inputs / "logo.svg")
    if src is None or layer is None or not box or box[2] <= 0 or box[3] <= 0:
        return Outcome(False, "no logo layer or no logo source", seen=ok.message)
    ref_doc = Doc(src)
    measure(ref_doc, ctx.scratch, "logo-source.svg")
    ref_box = ref_doc.box(src)
    if not ref_box:
        return Outcome(False, "logo.svg could not be measured")

    def rel(b: list[float], whole: list[float]) -> list[float]:
        return [(b[0] - whole[0]) / whole[2], (b[1] - whole[1]) / whole[3], b[2] / whole[2], b[3] / whole[3]]

    wanted = [rel(b, ref_box) for e in ref_doc.shapes(src) if (b := ref_doc.box(e))]
    seen = [(rel(b, box), fill_of(doc, e)) for e in doc.shapes(layer) if (b := doc.box(e))]
    unmatched, free = [], list(seen)
    for w in wanted:
        hit = next((s for s in free if max(abs(p - q) for p, q in zip(s[0], w, strict=True)) <= SHAPE_REL), None)
        if hit is None:
            unmatched.append([round(v, 3) for v in w])
        else:
            free.remove(hit)
    not_white = [f for _, f in seen if not same_colour(f, white)]
    return all_of({
        "every shape of logo.svg in place": Outcome(not unmatched, f"{len(unmatched)} of {len(wanted)} missing",
                                                     seen=unmatched[:6]),
        "nothing else in the logo": Outcome(not free, f"{len(free)} extra shapes"),
        "every shape Paper White": Outcome(bool(seen) and not not_white, f"{len(not_white)} not white",
                                           expected=white, seen=not_white[:6]),
    })
