"""Oracle: ultimate pit limit and nested pits by max-closure (min-cut, SciPy's Dinic max-flow).

python3 upl.py INPUTS_DIR OUTPUT_DIR
"""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

LB_PER_T = 2204.62262
G_PER_OZ = 31.1034768
INF = 2**30
# The model header says the skarn domain was merged from the lab export, with Au in ppb.
PPB_DOMAINS = {"SK"}


def read_model(path: Path) -> dict:
    """The cleaned block model: duplicates dropped, missing densities defaulted, Au in g/t."""
    header: dict[str, float] = {}
    rows = []
    with path.open() as fh:
        lines = [line for line in fh if line.strip()]
    for line in lines:
        if line.startswith("#") and "=" in line:
            for part in line[1:].split(";"):
                if "=" in part:
                    key, val = part.split("=", 1)
                    with contextlib.suppress(ValueError):
                        header[key.strip()] = float(val.split()[0])
    body = [line for line in lines if not line.startswith("#")]
    for rec in csv.DictReader(body):
        rows.append(rec)
    return {"header": header, "rows": rows}


def clean_blocks(model: dict, econ: dict) -> dict:
    h = model["header"]
    dx, dy, dz = h["dx"], h["dy"], h["dz"]
    x0, y0, z0 = h["xmin"], h["ymin"], h["zmin"]
    seen: dict[tuple[int, int, int], dict] = {}
    for rec in model["rows"]:
        ix = round((float(rec["xc"]) - x0) / dx - 0.5)
        iy = round((float(rec["yc"]) - y0) / dy - 0.5)
        iz = round((float(rec["zc"]) - z0) / dz - 0.5)
        seen.setdefault((ix, iy, iz), rec)  # the re-exported bench repeats rows verbatim
    keys = sorted(seen)
    rock = [seen[k]["rock"] for k in keys]
    cu = np.array([float(seen[k]["cu_pct"]) for k in keys])
    au = np.array([float(seen[k]["au_gpt"]) for k in keys])
    dens = np.array([float(seen[k]["density"]) for k in keys])
    for i, r in enumerate(rock):
        if r in PPB_DOMAINS:
            au[i] /= 1000.0
        if dens[i] <= 0:
            dens[i] = econ["default_density_t_m3"][r]
    idx = np.array(keys, dtype=np.int64)
    return {"idx": idx, "rock": rock, "cu": cu, "au": au, "density": dens,
            "tonnes": dens * dx * dy * dz, "zc": z0 + (idx[:, 2] + 0.5) * dz,
            "dx": dx, "dy": dy, "dz": dz, "origin": (x0, y0, z0),
            "shape": (int(h["nx"]), int(h["ny"]), int(h["nz"]))}


def block_values(b: dict, econ: dict, rf: float) -> tuple[np.ndarray, np.ndarray]:
    """(value in $, goes-to-mill flag) of every block at revenue factor rf."""
    m = econ["mining"]
    benches_below = np.maximum(0.0, (m["reference_rl_m"] - (b["zc"] + b["dz"] / 2)) / b["dz"])
    mine = b["tonnes"] * (m["cost_per_t"] + m["depth_increment_per_t_per_bench"] * benches_below)
    cu_net = econ["cu"]["price_per_lb"] - econ["cu"]["selling_cost_per_lb"]
    au_net = econ["au"]["price_per_oz"] - econ["au"]["selling_cost_per_oz"]
    proc = econ["processing"]
    rec_cu = np.array([proc[r]["cu_recovery"] for r in b["rock"]])
    rec_au = np.array([proc[r]["au_recovery"] for r in b["rock"]])
    pcost = np.array([proc[r]["cost_per_t"] for r in b["rock"]])
    revenue = rf * b["tonnes"] * (b["cu"] / 100 * LB_PER_T * rec_cu * cu_net
                                  + b["au"] / G_PER_OZ * rec_au * au_net)
    margin = revenue - b["tonnes"] * pcost
    mill = margin > 0
    return np.where(mill, margin, 0.0) - mine, mill


def cone_generators(nz: int, reach: float) -> list[tuple[int, int, int]]:
    """Offsets (di, dj, dk>0) of the slope cone that are not the sum of two cone offsets:
    arcs to these alone give the cone's full precedence by transitivity."""
    cone = set()
    for k in range(1, nz):
        r = int(np.floor(k * reach + 1e-9))
        for i in range(-r, r + 1):
            for j in range(-r, r + 1):
                if i * i + j * j <= (k * reach) ** 2 + 1e-9:
                    cone.add((i, j, k))
    gens = []
    for o in sorted(cone, key=lambda t: (t[2], t[0], t[1])):
        split = any((o[0] - a, o[1] - c, o[2] - n) in cone for (a, c, n) in cone if n < o[2])
        if not split:
            gens.append(o)
    return gens


def max_closure(shape: tuple[int, int, int], node_value: np.ndarray, gens, pad: int) -> np.ndarray:
    """Minimal maximum-value closure over the grid (air nodes worth 0), values in whole $.
    The grid is padded laterally with air so that cones leaving the model keep their
    transitivity: a position outside the model constrains nothing but passes arcs on."""
    node_value = np.pad(node_value, ((pad, pad), (pad, pad), (0, 0)))
    nx, ny, nz = node_value.shape
    shape = node_value.shape
    n = nx * ny * nz
    s, t = n, n + 1
    ids = np.arange(n).reshape(shape)
    src, dst, cap = [], [], []
    for di, dj, dk in gens:
        i0, i1 = max(0, -di), nx - max(0, di)
        j0, j1 = max(0, -dj), ny - max(0, dj)
        a = ids[i0:i1, j0:j1, 0:nz - dk]
        b = ids[i0 + di:i1 + di, j0 + dj:j1 + dj, dk:nz]
        src.append(a.ravel())
        dst.append(b.ravel())
        cap.append(np.full(a.size, INF, dtype=np.int64))
    v = np.rint(node_value.ravel()).astype(np.int64)
    pos, neg = np.flatnonzero(v > 0), np.flatnonzero(v < 0)
    src += [np.full(pos.size, s), neg]
    dst += [pos, np.full(neg.size, t)]
    cap += [v[pos], -v[neg]]
    assert v[pos].sum() < INF, "positive value too large for int32 max-flow"
    S, D, C = (np.concatenate(x) for x in (src, dst, cap))
    graph = csr_array((C.astype(np.int32), (S, D)), shape=(n + 2, n + 2))
    graph.sum_duplicates()
    flow = maximum_flow(graph, s, t).flow
    # Residual arcs: forward where capacity remains, backward where flow is positive.
    fwd = graph.tocoo()
    f = flow.tocsr()
    fv = np.asarray(f[fwd.row, fwd.col]).ravel()
    keep_f = fv < fwd.data
    keep_b = fv > 0
    r_rows = np.concatenate([fwd.row[keep_f], fwd.col[keep_b]])
    r_cols = np.concatenate([fwd.col[keep_f], fwd.row[keep_b]])
    res = csr_array((np.ones(r_rows.size, dtype=np.int8), (r_rows, r_cols)), shape=(n + 2, n + 2))
    reach = breadth_first_order(res, s, directed=True, return_predecessors=False)
    mask = np.zeros(n + 2, dtype=bool)
    mask[reach] = True
    return mask[:n].reshape(shape)[pad:nx - pad, pad:ny - pad, :]


def solve(inputs: Path) -> dict:
    econ = json.loads((inputs / "economics.json").read_text())
    b = clean_blocks(read_model(inputs / "block_model.csv"), econ)
    reach = b["dz"] / np.tan(np.radians(econ["slope"]["overall_angle_deg"])) / b["dx"]
    gens = cone_generators(b["shape"][2], reach)
    pad = int(np.ceil(reach * (b["shape"][2] - 1)))
    flat = np.ravel_multi_index(tuple(b["idx"].T), b["shape"])
    base_value, base_mill = block_values(b, econ, 1.0)
    pits = {}
    for rf in [1.0, *econ["revenue_factors"]]:
        value, _ = block_values(b, econ, rf)
        grid = np.zeros(int(np.prod(b["shape"])))
        grid[flat] = value
        pits[rf] = max_closure(b["shape"], grid.reshape(b["shape"]), gens, pad).ravel()[flat]
    return {"blocks": b, "value": base_value, "mill": base_mill, "pits": pits, "econ": econ}


def shell_stats(res: dict, in_pit: np.ndarray) -> dict:
    b, mill = res["blocks"], res["mill"]
    ore = in_pit & mill
    ore_t, total_t = float(b["tonnes"][ore].sum()), float(b["tonnes"][in_pit].sum())
    w = b["tonnes"][ore]
    return {"total_t": total_t, "ore_t": ore_t, "waste_t": total_t - ore_t,
            "cu_pct": float((b["cu"][ore] * w).sum() / w.sum()) if ore.any() else 0.0,
            "au_gpt": float((b["au"][ore] * w).sum() / w.sum()) if ore.any() else 0.0,
            "value_usd": float(res["value"][in_pit].sum())}


def write_outputs(res: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    b = res["blocks"]
    x0, y0, z0 = b["origin"]
    pit = res["pits"][1.0]
    with (out / "upl_blocks.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["xc", "yc", "zc", "rock", "tonnes", "dest", "value_usd"])
        for i in np.flatnonzero(pit):
            ix, iy, iz = b["idx"][i]
            w.writerow([f"{x0 + (ix + 0.5) * b['dx']:.1f}", f"{y0 + (iy + 0.5) * b['dy']:.1f}",
                        f"{z0 + (iz + 0.5) * b['dz']:.1f}", b["rock"][i], f"{b['tonnes'][i]:.1f}",
                        "mill" if res["mill"][i] else "waste", f"{res['value'][i]:.2f}"])
    with (out / "nested_pits.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        cols = ["total_t", "ore_t", "waste_t", "cu_pct", "au_gpt", "value_usd"]
        w.writerow(["revenue_factor", *cols])
        for rf in res["econ"]["revenue_factors"]:
            st = shell_stats(res, res["pits"][rf])
            w.writerow([f"{rf:.2f}", *(f"{st[c]:.4f}" if c.endswith(("pct", "gpt")) else f"{st[c]:.0f}" for c in cols)])
    st = shell_stats(res, pit)
    summary = {"pit_value_usd": round(st["value_usd"], 2), "ore_t": round(st["ore_t"]),
               "waste_t": round(st["waste_t"]), "strip_ratio": round(st["waste_t"] / st["ore_t"], 4),
               "cu_pct": round(st["cu_pct"], 4), "au_gpt": round(st["au_gpt"], 4),
               "blocks": int(pit.sum()),
               "data_issues": ["skarn-domain Au reported in ppb: divided by 1000",
                               "missing densities (-99) replaced by the rock-type default",
                               "duplicated block rows (a re-exported bench) kept once"]}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    write_outputs(solve(Path(sys.argv[1])), Path(sys.argv[2]))
