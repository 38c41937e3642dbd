"""Write the ad as an Inkscape SVG from the job ticket: python3 build_ad.py INPUTS OUT.svg [variant].

The grid arithmetic is done here; Inkscape then opens and re-saves the file (solve.sh). The
variants are the fixtures' deliverables (make_fixtures.py): valid other encodings and known mistakes.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

SVG = "http://www.w3.org/2000/svg"
PT_MM = 25.4 / 72
PX_MM = 25.4 / 96


def naive_cmyk(cmyk: list[float]) -> str:
    c, m, y, k = (v / 100 for v in cmyk)
    return "#" + "".join(f"{round(255 * (1 - v) * (1 - k)):02X}" for v in (c, m, y))


def build(inputs: Path, variant: str = "oracle") -> str:
    job = json.loads((inputs / "job.json").read_text())
    brand = json.loads((inputs / "brand.json").read_text())["colours"]

    def colour(name: str) -> str:
        if variant == "naive-cmyk":
            return naive_cmyk(brand[name]["cmyk"])
        return brand[name]["srgb"]

    trim_w, trim_h = job["trim_mm"]
    bleed = 0.0 if variant == "no-bleed" else job["bleed_mm"]
    margin, grid = job["live_margin_mm"], job["grid"]
    cols, rows, gut = grid["columns"], grid["rows"], grid["gutter_mm"]
    page_w, page_h = trim_w + 2 * bleed, trim_h + 2 * bleed
    x0, y0 = bleed + margin, bleed + margin
    x1, y1 = bleed + trim_w - margin, bleed + trim_h - margin
    col_w = (x1 - x0 - (cols - 1) * gut) / cols
    row_h = (y1 - y0 - (rows - 1) * gut) / rows

    def span(c: list[int], r: list[int]) -> tuple[float, float, float, float]:
        if variant == "no-grid":  # equal slices of the trim, no margins, no gutters
            w, h = page_w / cols, page_h / rows
            return (c[0] - 1) * w, (r[0] - 1) * h, (c[1] - c[0] + 1) * w, (r[1] - r[0] + 1) * h
        return (x0 + (c[0] - 1) * (col_w + gut), y0 + (r[0] - 1) * (row_h + gut),
                (c[1] - c[0] + 1) * col_w + (c[1] - c[0]) * gut,
                (r[1] - r[0] + 1) * row_h + (r[1] - r[0]) * gut)

    # User units: millimetres, or CSS px (96 dpi) in the "px-paths" variant.
    uu = PX_MM if variant == "px-paths" else 1.0

    def n(mm: float) -> str:
        return f"{mm / uu:.4f}".rstrip("0").rstrip(".")

    shift = 10.0 if variant == "group-transforms" else 0.0  # layers translated by -shift mm
    width = f"{page_w / 25.4:.6f}in" if variant == "group-transforms" else f"{page_w:g}mm"
    height = f"{page_h / 25.4:.6f}in" if variant == "group-transforms" else f"{page_h:g}mm"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="{SVG}" xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape" '
        'xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd" '
        f'width="{width}" height="{height}" viewBox="0 0 {n(page_w)} {n(page_h)}">',
        '<sodipodi:namedview id="namedview1" inkscape:document-units="mm"/>',
    ]

    def layer(label: str, body: list[str]) -> None:
        tf = f' transform="translate({n(-shift)},{n(-shift)})"' if shift else ""
        out.append(f'<g inkscape:groupmode="layer" inkscape:label="{label}" id="layer-{label.lower()}"{tf}>')
        out.extend(body)
        out.append("</g>")

    def box(ident: str, x: float, y: float, w: float, h: float, fill: str) -> str:
        x, y = x + shift, y + shift
        if variant == "px-paths":
            return (f'<path id="{ident}" style="fill:{fill.lower()};stroke:none" '
                    f'd="m {n(x)},{n(y)} h {n(w)} v {n(h)} h {n(-w)} z"/>')
        return (f'<rect id="{ident}" x="{n(x)}" y="{n(y)}" width="{n(w)}" height="{n(h)}" '
                f'style="fill:{fill};fill-opacity:1;stroke:none"/>')

    layer("Background", [box("background", 0, 0, page_w, page_h, colour(job["background"]["colour"]))])
    panels = [box(p["name"].replace(" ", "-"), *span(p["columns"], p["rows"]), colour(p["colour"]))
              for p in job["panels"]]
    if variant == "px-paths":
        panels.reverse()
    layer("Panels", panels)

    # The logo: its shapes kept, scaled uniformly to one column, reversed to white.
    logo = ET.parse(inputs / "logo.svg").getroot()
    vb = [float(v) for v in logo.get("viewBox", "0 0 150 60").split()]
    lw = col_w
    lh = col_w * (vb[3] / vb[2]) * (1.25 if variant == "stretched-logo" else 1.0)
    s_x, s_y = lw / vb[2] / uu, lh / vb[3] / uu
    tx, ty = x1 - lw + shift, y1 - lh + shift
    white = brand["Paper White"]["srgb"]
    shapes = []
    for el in logo.iter():
        tag = el.tag.split("}")[-1]
        if tag not in ("circle", "path", "rect"):
            continue
        attrs = {k: v for k, v in el.attrib.items() if k != "fill"}
        fill = el.get("fill") if variant == "naive-cmyk" else white
        a = " ".join(f'{k}="{v}"' for k, v in attrs.items())
        shapes.append(f'<{tag} {a} style="fill:{fill};stroke:none"/>')
    layer("Logo", [f'<g id="logo" transform="matrix({s_x:.6f},0,0,{s_y:.6f},{n(tx)},{n(ty)})">',
                   *shapes, "</g>"])

    texts = []
    for key, t in (("headline", job["headline"]), ("legal", job["legal_line"])):
        if key == "headline":
            offer = span(job["panels"][1]["columns"], job["panels"][1]["rows"])
            ax, ay = offer[0] + 5.0, offer[1] + 14.0
        else:
            ax, ay = x0, y1 - 2.0
        size_mm = t["size_pt"] * PT_MM
        if variant == "px-type":
            size = f"{t['size_pt'] * PX_MM / uu:.5f}px"  # the pt figure typed into a px field
        elif variant == "px-paths":
            size = f"{t['size_pt']:g}pt"  # CSS pt in a px-unit document: 4/3 user units each
        else:
            size = f"{size_mm / uu:.5f}px"
        weight = "bold" if "Bold" in t["font"] else "normal"
        style = (f"font-family:'DejaVu Sans';font-weight:{weight};font-size:{size};"
                 f"fill:{colour(t['colour'])};text-anchor:start")
        ax, ay = ax + shift, ay + shift
        if variant == "group-transforms":
            texts.append(f'<text id="{key}" xml:space="preserve" transform="translate({n(ax)},{n(ay)})" '
                         f'style="{style}"><tspan x="0" y="0">{t["text"]}</tspan></text>')
        else:
            texts.append(f'<text id="{key}" xml:space="preserve" style="{style}">'
                         f'<tspan id="{key}-span" x="{n(ax)}" y="{n(ay)}">{t["text"]}</tspan></text>')
    layer("Text", texts)
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    inputs, target = Path(sys.argv[1]), Path(sys.argv[2])
    target.write_text(build(inputs, sys.argv[3] if len(sys.argv) > 3 else "oracle"))
