"""Seeded generator of inputs/ and reference/ for open-pit-ultimate-limit: python3 generate.py --out DIR.

A porphyry Cu-Au stock with a skarn rind on its east contact, in hornfels host rock, under a
gently rolling topography. Traps: the skarn domain's Au is in ppb (lab export), a bench was
exported twice, and some blocks carry the missing-density code -99.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from scipy.ndimage import gaussian_filter

sys.path.insert(0, str(Path(__file__).parent / "solution"))
import upl

SEED = 20261203
CANARY = "ee50af5f-3ba5-4ef1-a8e0-c70918f563fb"
NX, NY, NZ = 32, 32, 16
DX, DY, DZ = 25.0, 25.0, 10.0
X0, Y0, Z0 = 4000.0, 7000.0, 1140.0

ECON = {
    "currency": "USD",
    "cu": {"price_per_lb": 4.10, "selling_cost_per_lb": 0.42},
    "au": {"price_per_oz": 2050.0, "selling_cost_per_oz": 8.0},
    "processing": {
        "PO": {"cost_per_t": 8.60, "cu_recovery": 0.89, "au_recovery": 0.68},
        "SK": {"cost_per_t": 11.40, "cu_recovery": 0.82, "au_recovery": 0.74},
        "HR": {"cost_per_t": 8.20, "cu_recovery": 0.84, "au_recovery": 0.60},
    },
    "mining": {"cost_per_t": 2.05, "reference_rl_m": 1300.0, "depth_increment_per_t_per_bench": 0.04},
    "default_density_t_m3": {"PO": 2.62, "SK": 3.10, "HR": 2.74},
    "slope": {"overall_angle_deg": 42.0},
    "revenue_factors": [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2],
}


def field(rng: np.random.Generator, sigma: float) -> np.ndarray:
    f = gaussian_filter(rng.standard_normal((NX, NY, NZ)), sigma=sigma, mode="wrap")
    return (f - f.mean()) / f.std()


def build(rng: np.random.Generator) -> list[list[str]]:
    ix, iy, iz = np.meshgrid(np.arange(NX), np.arange(NY), np.arange(NZ), indexing="ij")
    x, y, z = X0 + (ix + 0.5) * DX, Y0 + (iy + 0.5) * DY, Z0 + (iz + 0.5) * DZ
    cx, cy = X0 + 370.0 + 0.2 * (z - Z0), Y0 + 400.0   # the stock plunges east with depth
    r = np.hypot(x - cx, y - cy)
    ang = np.degrees(np.arctan2(y - cy, x - cx))
    rock = np.where(r < 105.0, "PO", np.where((r < 150.0) & (np.abs(ang) < 65.0), "SK", "HR"))
    n1, n2, n3 = field(rng, 1.6), field(rng, 1.6), field(rng, 1.0)
    cu = np.select([rock == "PO", rock == "SK"],
                   [0.46 * np.exp(-r / 95.0) * np.exp(0.45 * n1 - 0.1),
                    0.40 * np.exp(0.50 * n1 - 0.12)],
                   0.05 * np.exp(0.5 * n1 - 0.12))
    au = np.select([rock == "PO", rock == "SK"],
                   [0.20 * np.exp(-r / 150.0) * np.exp(0.5 * n2 - 0.12), 0.55 * np.exp(0.55 * n2 - 0.15)],
                   0.03 * np.exp(0.5 * n2 - 0.12))
    dens = np.vectorize(ECON["default_density_t_m3"].get)(rock) + 0.04 * n3
    topo = 1281.0 + 12.0 * np.sin((x - X0) / 150.0) * np.cos((y - Y0) / 210.0) + 0.02 * (y - Y0)
    present = z < topo
    missing = rng.random(present.shape) < 0.025
    rows = []
    for i, j, k in zip(*np.nonzero(present), strict=True):
        au_txt = f"{au[i, j, k] * 1000:.0f}" if rock[i, j, k] == "SK" else f"{au[i, j, k]:.3f}"
        d_txt = "-99" if missing[i, j, k] else f"{dens[i, j, k]:.3f}"
        rows.append([f"{x[i, j, k]:.1f}", f"{y[i, j, k]:.1f}", f"{z[i, j, k]:.1f}", str(rock[i, j, k]),
                     f"{cu[i, j, k]:.3f}", au_txt, d_txt])
    rows.sort(key=lambda rw: (-float(rw[2]), float(rw[1]), float(rw[0])))
    rebench = [rw for rw in rows if rw[2] == "1245.0" and float(rw[0]) < X0 + 360.0]
    return rows + rebench


def write_inputs(inputs: Path, rows: list[list[str]]) -> None:
    inputs.mkdir(parents=True, exist_ok=True)
    head = [
        "# Block model export, Cerro Tinto Cu-Au project, resource model RM-2026-07",
        f"# xmin={X0:.1f}; ymin={Y0:.1f}; zmin={Z0:.1f}",
        f"# dx={DX:.1f}; dy={DY:.1f}; dz={DZ:.1f}",
        f"# nx={NX}; ny={NY}; nz={NZ}",
        "# xc, yc, zc: block centroid, m (local mine grid, z = elevation RL); blocks above topography are absent",
        "# rock: PO porphyry stock, SK skarn, HR hornfels host",
        "# cu_pct: Cu %; au_gpt: Au g/t; density: dry bulk density t/m3",
        "# SK domain merged from skarn_ALS_2019.csv as received (assays: Cu %, Au ppb)",
        "# density -99: not estimated",
        "xc,yc,zc,rock,cu_pct,au_gpt,density",
    ]
    with (inputs / "block_model.csv").open("w") as fh:
        fh.write("\n".join(head) + "\n")
        fh.writelines(",".join(rw) + "\n" for rw in rows)
    (inputs / "economics.json").write_text(json.dumps(ECON, indent=2) + "\n")


def cone_violations(b: dict, pit: np.ndarray, angle: float) -> int:
    """Blocks of the pit with a model block inside their slope cone left out of it."""
    grid = np.zeros((NX, NY, NZ), dtype=np.int8)  # 0 air, 1 rock outside the pit, 2 pit
    grid[tuple(b["idx"].T)] = 1
    grid[tuple(b["idx"][pit].T)] = 2
    reach = DZ / np.tan(np.radians(angle))
    bad = np.zeros_like(grid, dtype=bool)
    for k in range(1, NZ):
        r = int(k * reach / DX)
        for i in range(-r, r + 1):
            for j in range(-r, r + 1):
                if (i * DX) ** 2 + (j * DY) ** 2 > (k * reach) ** 2 + 1e-6:
                    continue
                src = grid[max(0, -i):NX - max(0, i), max(0, -j):NY - max(0, j), :NZ - k]
                dst = grid[max(0, i):NX - max(0, -i), max(0, j):NY - max(0, -j), k:]
                bad[max(0, -i):NX - max(0, i), max(0, -j):NY - max(0, j), :NZ - k] |= (src == 2) & (dst == 1)
    return int(bad.sum())


def assert_unique(res: dict) -> None:
    """Every shell stays the same when each block gains or loses $2: no near-tie between
    pits, so the optimum does not depend on how values are rounded."""
    b, econ = res["blocks"], res["econ"]
    reach = b["dz"] / np.tan(np.radians(econ["slope"]["overall_angle_deg"])) / b["dx"]
    gens = upl.cone_generators(b["shape"][2], reach)
    pad = int(np.ceil(reach * (b["shape"][2] - 1)))
    flat = np.ravel_multi_index(tuple(b["idx"].T), b["shape"])
    for rf, pit in res["pits"].items():
        value, _ = upl.block_values(b, econ, rf)
        for shift in (-2.0, 2.0):
            grid = np.zeros(int(np.prod(b["shape"])))
            grid[flat] = value + shift
            other = upl.max_closure(b["shape"], grid.reshape(b["shape"]), gens, pad).ravel()[flat]
            assert np.array_equal(other, pit), f"near-tie at revenue factor {rf}"


def reference(inputs: Path) -> dict:
    res = upl.solve(inputs)
    assert_unique(res)
    b = res["blocks"]
    x0, y0, z0 = b["origin"]
    key = [[round(x0 + (i + 0.5) * b["dx"], 1), round(y0 + (j + 0.5) * b["dy"], 1),
            round(z0 + (k + 0.5) * b["dz"], 1)] for i, j, k in b["idx"].tolist()]
    pit = res["pits"][1.0]
    assert cone_violations(b, pit, ECON["slope"]["overall_angle_deg"]) == 0
    nested = {f"{rf:.2f}": upl.shell_stats(res, res["pits"][rf]) for rf in ECON["revenue_factors"]}
    return {"canary": CANARY,
            "pit_blocks": [key[i] for i in np.flatnonzero(pit)],
            "mill_blocks": [key[i] for i in np.flatnonzero(pit & res["mill"])],
            "summary": upl.shell_stats(res, pit),
            "nested": nested}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = np.random.default_rng(SEED)
    write_inputs(out / "inputs", build(rng))
    ref = reference(out / "inputs")
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "reference" / "expected.json").write_text(json.dumps(ref, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
