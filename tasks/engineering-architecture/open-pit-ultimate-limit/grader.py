"""Grader for open-pit-ultimate-limit.

The grader values every block of the model itself (its own reading of the block model and the
economics, with the three data fixes), checks the agent's pit against the full 42-degree slope
cone (every level, not a one-bench template) and compares its value with the reference optimum,
the smallest maximum-value pit. Nested pits and the summary are compared with the reference
figures at the precision the instruction states.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math

import numpy as np

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    as_number,
    get,
    load_csv,
    load_json,
    match_rows,
    near,
    no_problems,
    rows_by,
)

LB_PER_T = 2204.62262
G_PER_OZ = 31.1034768
# The crux gate: a slope-feasible pit worth at least this share of the optimum. A pit found by
# max-closure on the right economics and cone reaches 100 %; the coarse threshold only keeps
# out pits that were not optimised (cut-off outlines, wrong prices, a wrong slope template).
CRUX_VALUE_SHARE = 0.97
NESTED = ["total_t", "ore_t", "waste_t", "cu_pct", "au_gpt", "value_usd"]


def read_model(path) -> tuple[dict, list[dict]]:
    header, body = {}, []
    with open(path) as fh:
        for line in fh:
            if line.startswith("#"):
                for part in line[1:].split(";"):
                    key, eq, val = part.partition("=")
                    if eq:
                        with contextlib.suppress(ValueError):
                            header[key.strip()] = float(val.strip())
            elif line.strip():
                body.append(line)
    return header, list(csv.DictReader(body))


class Model:
    """The block model as an engineer cleans it: one row per block (a bench was exported
    twice), missing densities (-99) from the rock-type defaults, skarn Au from ppb to g/t."""

    def __init__(self, ctx: GradeContext) -> None:
        self.econ = json.loads((ctx.inputs / "economics.json").read_text())
        h, rows = read_model(ctx.inputs / "block_model.csv")
        self.d = (h["dx"], h["dy"], h["dz"])
        self.o = (h["xmin"], h["ymin"], h["zmin"])
        self.shape = (int(h["nx"]), int(h["ny"]), int(h["nz"]))
        blocks: dict[tuple[int, int, int], dict] = {}
        for row in rows:
            blocks.setdefault(self.key(row["xc"], row["yc"], row["zc"]), row)
        self.keys = sorted(blocks)
        self.pos = {k: i for i, k in enumerate(self.keys)}
        rock = [blocks[k]["rock"] for k in self.keys]
        cu = np.array([float(blocks[k]["cu_pct"]) for k in self.keys])
        au = np.array([float(blocks[k]["au_gpt"]) for k in self.keys])
        au[np.array([r == "SK" for r in rock])] /= 1000.0
        dens = np.array([float(blocks[k]["density"]) for k in self.keys])
        default = np.array([self.econ["default_density_t_m3"][r] for r in rock])
        dens = np.where(dens > 0, dens, default)
        self.rock, self.cu, self.au = rock, cu, au
        self.tonnes = dens * self.d[0] * self.d[1] * self.d[2]
        self.value, self.mill = self.values()

    def key(self, xc, yc, zc) -> tuple[int, int, int] | None:
        idx = []
        for v, o, d in zip((xc, yc, zc), self.o, self.d, strict=True):
            f = as_number(v)
            if f is None:
                return None
            q = (f - o) / d - 0.5
            if abs(q - round(q)) > 0.01:
                return None
            idx.append(round(q))
        return tuple(idx)

    def values(self) -> tuple[np.ndarray, np.ndarray]:
        e = self.econ
        top = np.array([self.o[2] + (k[2] + 1) * self.d[2] for k in self.keys])
        benches = np.maximum(0.0, (e["mining"]["reference_rl_m"] - top) / self.d[2])
        mining = self.tonnes * (e["mining"]["cost_per_t"] + e["mining"]["depth_increment_per_t_per_bench"] * benches)
        p = e["processing"]
        cu_usd = self.cu / 100 * LB_PER_T * (e["cu"]["price_per_lb"] - e["cu"]["selling_cost_per_lb"])
        au_usd = self.au / G_PER_OZ * (e["au"]["price_per_oz"] - e["au"]["selling_cost_per_oz"])
        net = np.array([cu_usd[i] * p[r]["cu_recovery"] + au_usd[i] * p[r]["au_recovery"] - p[r]["cost_per_t"]
                        for i, r in enumerate(self.rock)])
        return self.tonnes * np.maximum(net, 0.0) - mining, net > 0

    def cone_violations(self, in_pit: np.ndarray) -> list[str]:
        """Pit blocks with a model block inside their slope cone (any level above) left out."""
        nx, ny, nz = self.shape
        grid = np.zeros(self.shape, dtype=np.int8)  # 0 air, 1 rock left in place, 2 mined
        idx = np.array(self.keys)
        grid[tuple(idx.T)] = 1
        grid[tuple(idx[in_pit].T)] = 2
        run = self.d[2] / math.tan(math.radians(self.econ["slope"]["overall_angle_deg"]))
        bad = np.zeros(self.shape, dtype=bool)
        for k in range(1, nz):
            ri = int(k * run / self.d[0] + 1e-9)
            rj = int(k * run / self.d[1] + 1e-9)
            for i in range(-ri, ri + 1):
                for j in range(-rj, rj + 1):
                    if (i * self.d[0]) ** 2 + (j * self.d[1]) ** 2 > (k * run) ** 2 + 1e-6:
                        continue
                    a = (slice(max(0, -i), nx - max(0, i)), slice(max(0, -j), ny - max(0, j)))
                    b = (slice(max(0, i), nx - max(0, -i)), slice(max(0, j), ny - max(0, -j)))
                    bad[a[0], a[1], : nz - k] |= (grid[a[0], a[1], : nz - k] == 2) & (grid[b[0], b[1], k:] == 1)
        return [self.centroid(tuple(int(v) for v in t)) for t in np.argwhere(bad)]

    def centroid(self, k: tuple[int, int, int]) -> str:
        return ", ".join(f"{o + (i + 0.5) * d:.1f}" for o, i, d in zip(self.o, k, self.d, strict=True))


def read_pit(m: Model, rows: list[dict] | None) -> tuple[np.ndarray, dict, list[str]]:
    in_pit = np.zeros(len(m.keys), dtype=bool)
    dest: dict[int, str] = {}
    problems = []
    for n, row in enumerate(rows or [], start=2):
        k = m.key(row.get("xc"), row.get("yc"), row.get("zc"))
        i = m.pos.get(k) if k is not None else None
        if i is None:
            problems.append(f"line {n}: ({row.get('xc')}, {row.get('yc')}, {row.get('zc')}) is not a block of the model")
        elif in_pit[i]:
            problems.append(f"line {n}: block {m.centroid(k)} listed twice")
        else:
            in_pit[i] = True
            dest[i] = str(row.get("dest") or "").strip().lower()
    if rows is not None and not rows:
        problems.append("no blocks listed")
    return in_pit, dest, problems


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    m = Model(ctx)

    rows, ok = load_csv(ctx.out("upl_blocks.csv"), required_columns=["xc", "yc", "zc", "dest"])
    r.gate("upl_blocks.csv has the columns xc, yc, zc, dest", ok)
    in_pit, dest, problems = read_pit(m, rows)
    r.gate("every listed block is one block of the model, listed once",
           no_problems(problems, f"{int(in_pit.sum())} model blocks"))
    violations = m.cone_violations(in_pit) if in_pit.any() else ["empty pit"]
    r.gate("the pit respects the 42-degree overall slope cone at every level",
           no_problems(violations, "no block mined under unmined rock", expected="0 violations"))
    ref_pit = np.zeros(len(m.keys), dtype=bool)
    for xyz in ref["pit_blocks"]:
        ref_pit[m.pos[m.key(*xyz)]] = True
    best = float(m.value[ref_pit].sum())
    got = float(m.value[in_pit].sum())
    r.gate("pit value (graded economics) is at least 97% of the optimum",
           Outcome(got >= CRUX_VALUE_SHARE * best, f"pit worth ${got:,.0f} against the optimum ${best:,.0f}",
                   expected=round(best, 2), seen=round(got, 2)))

    # The optimum is unique (the smallest optimal pit): a valid solution lists exactly its blocks.
    diff = [m.centroid(m.keys[i]) for i in np.flatnonzero(in_pit != ref_pit)]
    r.check("the pit is exactly the optimal ultimate pit", 4,
            no_problems(diff, f"all {int(ref_pit.sum())} blocks of the optimal pit", expected="0 blocks differ"))
    # Whole dollars on a $360M pit: the value is a sum of block values.
    r.check("the pit's value equals the optimum to $1,000", 2, near(got, best, abs=1000.0))
    wrong_dest = [f"{m.centroid(m.keys[i])}: {dest[i]!r}" for i in sorted(dest)
                  if dest[i] != ("mill" if m.mill[i] else "waste")]
    r.check("each pit block is routed to mill or waste by its processing margin", 2,
            no_problems(wrong_dest, "all routings right", expected="mill when the processing margin is positive"))

    summary, ok_s = load_json(ctx.out("summary.json"))
    s = ref["summary"]
    r.check("summary.json: pit value, ore and waste tonnes, blocks", 2, all_of([
        ("pit_value_usd", near(get(summary, "pit_value_usd"), s["value_usd"], abs=1000.0)),
        ("ore_t", near(get(summary, "ore_t"), s["ore_t"], abs=1000.0)),
        ("waste_t", near(get(summary, "waste_t"), s["waste_t"], abs=1000.0)),
        ("blocks", near(get(summary, "blocks"), int(ref_pit.sum()), abs=0.0)),
    ]) if ok_s else ok_s)
    # Grades and the strip ratio to 4 decimals as stated: half a unit of the last place, and
    # the ratio's rounding of two tonnages each to 1,000 t.
    r.check("summary.json: head grades and strip ratio", 1, all_of([
        ("cu_pct", near(get(summary, "cu_pct"), s["cu_pct"], abs=6e-4)),
        ("au_gpt", near(get(summary, "au_gpt"), s["au_gpt"], abs=6e-4)),
        ("strip_ratio", near(get(summary, "strip_ratio"), s["waste_t"] / s["ore_t"], abs=1e-3)),
    ]) if ok_s else ok_s)

    nested, ok_n = load_csv(ctx.out("nested_pits.csv"), required_columns=["revenue_factor", *NESTED])
    want = {f"{float(rf):.2f}": v for rf, v in ref["nested"].items()}
    seen = rows_by(nested, lambda row: f"{as_number(row['revenue_factor']):.2f}")
    r.check("nested_pits.csv: one row per revenue factor", 1, seen.coverage(want) if ok_n else ok_n)
    # Tonnes to 1,000 t and value to $1,000 (a block is 15,000 t or more); grades to 4 decimals.
    r.check("nested pits: tonnages and value of every shell", 3,
            match_rows(seen, want, ["total_t", "ore_t", "waste_t", "value_usd"], abs=1000.0) if ok_n else ok_n)
    r.check("nested pits: ore grades of every shell", 1,
            match_rows(seen, want, ["cu_pct", "au_gpt"], abs=6e-4) if ok_n else ok_n)
    totals = [as_number(seen[k].get("total_t")) if k in seen else None for k in sorted(want)]
    nested_ok = all(t is not None for t in totals) and all(a <= b for a, b in zip(totals, totals[1:], strict=False))
    r.check("nested pits grow with the revenue factor", 1,
            Outcome(nested_ok, "shell tonnages non-decreasing" if nested_ok else "shells shrink or are missing",
                    seen=totals))
    return r
