"""Seeded generator of inputs/ and reference/ for ki67-index-ihc-tiles: python3 generate.py --out DIR.

Brightfield Ki-67 IHC tiles (DAB on hematoxylin) made by Beer-Lambert from known concentration
maps. Planted: the lab's stain vectors differ from the textbook ones, the glass is not white
(each tile has its own background), one tile was scanned at 1.0 um/px instead of 0.5, many nuclei
touch, and strongly positive nuclei carry little hematoxylin.
"""

import argparse
import csv
import json
from pathlib import Path

import numpy as np
import tifffile
from scipy import ndimage

SEED = 6701
CANARY = "ab1195ce-4cbe-4577-920e-cee1f0ae0ec5"
SIZE = 256
STAINS = {"hematoxylin": (0.56, 0.74, 0.37), "dab": (0.21, 0.47, 0.86)}
POSITIVE_OD = 0.15
TILES = [  # name, microns per pixel, fraction positive, glass RGB
    ("T01", 0.5, 0.18, (218, 226, 240)),
    ("T02", 0.5, 0.42, (211, 220, 237)),
    ("T03", 1.0, 0.30, (224, 229, 239)),
    ("T04", 0.5, 0.62, (214, 224, 241)),
]


def unit(v: tuple[float, ...]) -> np.ndarray:
    a = np.array(v, dtype=float)
    return a / np.linalg.norm(a)


def tissue_edge(x_um: np.ndarray | float, extent_um: float) -> np.ndarray | float:
    """The tissue ends below this y (um): the bottom of each tile is bare glass."""
    return 0.84 * extent_um + 0.03 * extent_um * np.sin(x_um / extent_um * 7.0)


def place_nuclei(rng: np.random.Generator, extent_um: float, n_try: int) -> list[tuple[float, float]]:
    """Centres (um) with touching allowed: a minimum distance below one nucleus diameter."""
    pts: list[tuple[float, float]] = []
    for _ in range(n_try):
        p = rng.uniform(5.0, extent_um - 5.0, 2)
        if p[1] > tissue_edge(p[0], extent_um) - 5.0:
            continue
        if all((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 >= 7.0**2 for q in pts):
            pts.append((float(p[0]), float(p[1])))
    return pts


def make_tile(rng: np.random.Generator, mpp: float, frac_pos: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    extent = SIZE * mpp
    n_try = 300 if mpp == 0.5 else 900
    centres = place_nuclei(rng, extent, n_try)
    yy, xx = (np.mgrid[0:SIZE, 0:SIZE] + 0.5) * mpp
    labels = np.zeros((SIZE, SIZE), dtype=np.int32)
    tissue = yy < tissue_edge(xx, extent)
    h = np.where(tissue, 0.05, 0.0)
    d = np.where(tissue, 0.015, 0.0)
    nuclei = []
    for k, (cx, cy) in enumerate(centres, start=1):
        a = rng.normal(4.6, 0.5)
        b = a / rng.uniform(1.0, 1.45)
        t = rng.uniform(0, np.pi)
        u = (xx - cx) * np.cos(t) + (yy - cy) * np.sin(t)
        v = -(xx - cx) * np.sin(t) + (yy - cy) * np.cos(t)
        inside = (u / a) ** 2 + (v / b) ** 2 <= 1.0
        positive = rng.random() < frac_pos
        if positive:
            dab = rng.choice([rng.uniform(0.19, 0.3), rng.uniform(0.3, 0.85)], p=[0.3, 0.7])
            hem = rng.uniform(0.12, 0.35)
        else:
            dab = rng.choice([rng.uniform(0.0, 0.05), rng.uniform(0.07, 0.11)], p=[0.75, 0.25])
            hem = rng.uniform(0.45, 0.8)
        labels[inside] = k
        h[inside] = hem
        d[inside] = dab
        nuclei.append(k)
    texture = ndimage.gaussian_filter(rng.normal(0, 1, (SIZE, SIZE)), 1.2)
    h = h * (1 + 0.5 * texture * (labels > 0))
    h = ndimage.gaussian_filter(h, 0.6)
    d = ndimage.gaussian_filter(d, 0.6)
    return labels, h, d, nuclei


def render(h: np.ndarray, d: np.ndarray, glass: tuple[int, int, int], rng: np.random.Generator) -> np.ndarray:
    od = h[..., None] * unit(STAINS["hematoxylin"]) + d[..., None] * unit(STAINS["dab"])
    rgb = np.array(glass, dtype=float) * 10.0 ** (-od) + rng.normal(0, 1.5, od.shape)
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = np.random.default_rng(SEED)
    tiles_dir = out / "inputs" / "tiles"
    tiles_dir.mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    truth_rows, per_tile, masks = [], {}, {}
    for name, mpp, frac, glass in TILES:
        labels, h, d, ids = make_tile(rng, mpp, frac)
        rgb = render(h, d, glass, rng)
        desc = f"Aperio Image Library v12.0.15 \r\n256x256 [0,0 256x256] (256x256) RAW|AppMag = {20 if mpp == 1.0 else 40}|MPP = {mpp:.4f}|Tile = {name}"
        tifffile.imwrite(tiles_dir / f"{name}.tif", rgb, photometric="rgb", description=desc,
                         resolution=(1e4 / mpp, 1e4 / mpp), resolutionunit="CENTIMETER", metadata=None)
        n_pos = 0
        for k in ids:
            m = labels == k
            if m.sum() < 4:
                continue
            rr, cc = np.nonzero(m)
            od = float(d[m].mean())
            pos = od > POSITIVE_OD
            n_pos += pos
            truth_rows.append({"tile": name, "id": k, "x_um": round((cc.mean() + 0.5) * mpp, 3),
                               "y_um": round((rr.mean() + 0.5) * mpp, 3), "area_um2": round(m.sum() * mpp**2, 3),
                               "dab_od": round(od, 4), "positive": int(pos)})
        n = sum(1 for r in truth_rows if r["tile"] == name)
        per_tile[name] = {"mpp": mpp, "glass_rgb": list(glass), "nuclei": n, "positive": n_pos,
                          "ki67_index_pct": round(100.0 * n_pos / n, 3)}
        masks[name] = labels
    total = sum(t["nuclei"] for t in per_tile.values())
    pos = sum(t["positive"] for t in per_tile.values())
    (out / "inputs" / "stain_calibration.json").write_text(json.dumps({
        "note": "Optical-density unit vectors (R, G, B) measured on this lab's single-stain control slides, Ki-67 run 2026-11",
        "hematoxylin": [round(float(v), 4) for v in unit(STAINS["hematoxylin"])],
        "dab": [round(float(v), 4) for v in unit(STAINS["dab"])],
    }, indent=2) + "\n")
    (out / "reference" / "truth.json").write_text(json.dumps({
        "canary": CANARY, "positive_od": POSITIVE_OD, "tiles": per_tile,
        "overall": {"nuclei": total, "positive": pos, "ki67_index_pct": round(100.0 * pos / total, 3)},
    }, indent=1) + "\n")
    with open(out / "reference" / "nuclei_truth.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(truth_rows[0]))
        w.writeheader()
        w.writerows(truth_rows)


if __name__ == "__main__":
    main()
