"""Seeded generator of inputs/ and reference/ for magazine-ad-mechanical: python3 generate.py --out DIR.

Inputs: the publication's mechanical spec and the creative brief (brief.md, with the same numbers
in job.json), the brand palette (brand.json) and the client's logo (logo.svg). Reference: the
geometry the brief implies, in millimetres from the top-left corner of the page (the bleed box).
"""

import argparse
import json
import random
from pathlib import Path

SEED = 7
CANARY = "ff112b41-a2cc-4b81-997d-4a33d3f9ddb6"
PT_MM = 25.4 / 72

BRAND = {
    "Harbour Teal": {"cmyk": [88, 28, 42, 38], "srgb": "#0B5C63"},
    "Sea Mist": {"cmyk": [14, 2, 10, 0], "srgb": "#DCEBE6"},
    "Buoy Orange": {"cmyk": [0, 68, 92, 0], "srgb": "#F0642A"},
    "Paper White": {"cmyk": [0, 0, 0, 0], "srgb": "#FFFFFF"},
}
# The logo: a sun (circle), a wave (cubic curves) and a four-bar mark; the artwork fills its
# 150 x 60 canvas exactly, so its visible bounding box and its canvas agree.
LOGO = """<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="150" height="60" viewBox="0 0 150 60">
  <title>Marlow Marine Supply - primary logo (full colour)</title>
  <g id="marlow-logo">
    <circle id="sun" cx="24" cy="16" r="16" fill="#F0642A"/>
    <path id="wave" fill="#0B5C63" d="M 0 50 C 10 40 20 40 30 48 C 38 54 44 52 52 44 L 52 60 L 0 60 Z"/>
    <rect id="bar1" x="62" y="8" width="14" height="52" fill="#1E2B2F"/>
    <rect id="bar2" x="82" y="20" width="14" height="40" fill="#1E2B2F"/>
    <rect id="bar3" x="102" y="14" width="14" height="46" fill="#1E2B2F"/>
    <rect id="bar4" x="122" y="28" width="28" height="32" fill="#F0642A"/>
  </g>
</svg>
"""
LOGO_SIZE = (150.0, 60.0)


def r3(v: float) -> float:
    return round(v + 0.0, 3)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)

    trim_w, trim_h = rng.choice([(213.0, 276.0), (206.0, 273.0), (220.0, 285.0)])
    bleed = rng.choice([3.0, 5.0])
    margin = rng.choice([11.0, 12.0, 13.0])
    gutter = rng.choice([4.0, 4.5, 5.0])
    cols, rows = 4, 6
    headline = rng.choice(["Summer, Afloat", "Set Your Course", "Made for Tides"])
    headline_pt = rng.choice([26.0, 28.0])
    legal = ("Offer valid 1-31 July 2027 at participating Marlow stores while stocks last. "
             "Terms apply.")
    legal_pt = 6.5
    inset, base_drop, legal_raise = 5.0, 14.0, 2.0

    page_w, page_h = trim_w + 2 * bleed, trim_h + 2 * bleed
    live = [bleed + margin, bleed + margin, bleed + trim_w - margin, bleed + trim_h - margin]
    col_w = (live[2] - live[0] - (cols - 1) * gutter) / cols
    row_h = (live[3] - live[1] - (rows - 1) * gutter) / rows

    def span(c0: int, c1: int, r0: int, r1: int) -> list[float]:
        x = live[0] + (c0 - 1) * (col_w + gutter)
        y = live[1] + (r0 - 1) * (row_h + gutter)
        return [r3(x), r3(y), r3((c1 - c0 + 1) * col_w + (c1 - c0) * gutter),
                r3((r1 - r0 + 1) * row_h + (r1 - r0) * gutter)]

    image_well = span(1, 4, 1, 3)
    offer = span(1, 3, 4, 5)
    logo_w = col_w
    logo_h = logo_w * LOGO_SIZE[1] / LOGO_SIZE[0]
    logo_box = [r3(live[2] - logo_w), r3(live[3] - logo_h), r3(logo_w), r3(logo_h)]

    job = {
        "publication": "Coastline Living (monthly, sheet-fed offset)",
        "ad": "full page, bleed",
        "trim_mm": [trim_w, trim_h],
        "bleed_mm": bleed,
        "live_margin_mm": margin,
        "grid": {"columns": cols, "rows": rows, "gutter_mm": gutter, "over": "live area"},
        "layers": ["Background", "Panels", "Logo", "Text"],
        "background": {"colour": "Harbour Teal", "extent": "bleed box"},
        "panels": [
            {"name": "image well", "colour": "Sea Mist", "columns": [1, 4], "rows": [1, 3]},
            {"name": "offer panel", "colour": "Buoy Orange", "columns": [1, 3], "rows": [4, 5]},
        ],
        "logo": {"file": "logo.svg", "version": "reversed (every shape Paper White)",
                 "width": "one grid column", "anchor": "bottom-right corner of the live area"},
        "headline": {"text": headline, "font": "DejaVu Sans Bold", "size_pt": headline_pt,
                     "colour": "Paper White", "align": "left",
                     "x": f"offer panel left edge + {inset:g} mm",
                     "baseline": f"offer panel top edge + {base_drop:g} mm"},
        "legal_line": {"text": legal, "font": "DejaVu Sans", "size_pt": legal_pt,
                       "colour": "Paper White", "align": "left", "x": "live area left edge",
                       "baseline": f"live area bottom edge - {legal_raise:g} mm"},
    }
    (out / "inputs" / "job.json").write_text(json.dumps(job, indent=2) + "\n")
    (out / "inputs" / "brand.json").write_text(json.dumps(
        {"client": "Marlow Marine Supply",
         "note": "CMYK builds are for press; use the sRGB values in RGB/SVG artwork.",
         "colours": BRAND}, indent=2) + "\n")
    (out / "inputs" / "logo.svg").write_text(LOGO)
    brief = f"""# Job ticket: Marlow Marine Supply, full-page ad, Coastline Living (July 2027)

## Publication mechanical spec (from the publisher's media kit)

- Trim size: {trim_w:g} x {trim_h:g} mm (width x height), portrait.
- Bleed: {bleed:g} mm on all four sides. Supply artwork at trim plus bleed.
- Live (safe) area: {margin:g} mm inside the trim on every side. Keep all type and logos inside it.

## Creative brief

The page is laid out on a {cols}-column by {rows}-row modular grid that fills the live area, with a
{gutter:g} mm gutter between columns and between rows (no gutter outside the outer columns/rows).
Columns are numbered 1-{cols} from the left, rows 1-{rows} from the top.

- Background: Harbour Teal, full bleed.
- Image well (FPO box, the photo is placed by the publisher's studio later): a Sea Mist box spanning
  columns 1-4 and rows 1-3.
- Offer panel: a Buoy Orange box spanning columns 1-3 and rows 4-5.
- Logo: the client's logo (logo.svg), reversed out (every shape of it Paper White), exactly one grid
  column wide, proportions kept, its bottom-right corner on the bottom-right corner of the live area.
- Headline: "{headline}", DejaVu Sans Bold, {headline_pt:g} pt, Paper White, left-aligned, starting
  {inset:g} mm right of the offer panel's left edge, baseline {base_drop:g} mm below the panel's top edge.
- Legal line: "{legal}", DejaVu Sans (regular), {legal_pt:g} pt, Paper White, left-aligned, starting
  at the left edge of the live area, baseline {legal_raise:g} mm above the live area's bottom edge.

Colours: see brand.json (the client's palette). All boxes are flat fills with no stroke.
"""
    (out / "inputs" / "brief.md").write_text(brief)

    expected = {
        "canary": CANARY,
        "page_mm": [r3(page_w), r3(page_h)],
        "live_box_mm": [r3(v) for v in live],
        "column_width_mm": r3(col_w),
        "row_height_mm": r3(row_h),
        "layers": ["Background", "Panels", "Logo", "Text"],
        "background_fill": BRAND["Harbour Teal"]["srgb"],
        "panels": {
            "image well": {"box_mm": image_well, "fill": BRAND["Sea Mist"]["srgb"]},
            "offer panel": {"box_mm": offer, "fill": BRAND["Buoy Orange"]["srgb"]},
        },
        "logo_box_mm": logo_box,
        "logo_fill": BRAND["Paper White"]["srgb"],
        "texts": {
            "headline": {"content": headline, "family": "DejaVu Sans", "bold": True,
                         "size_pt": headline_pt, "fill": BRAND["Paper White"]["srgb"],
                         "anchor_mm": [r3(offer[0] + inset), r3(offer[1] + base_drop)]},
            "legal line": {"content": legal, "family": "DejaVu Sans", "bold": False,
                           "size_pt": legal_pt, "fill": BRAND["Paper White"]["srgb"],
                           "anchor_mm": [r3(live[0]), r3(live[3] - legal_raise)]},
        },
        "pt_mm": PT_MM,
    }
    (out / "reference" / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")


if __name__ == "__main__":
    main()
