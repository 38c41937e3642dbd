"""Grader for well-log-net-pay.

The grader reads the raw LAS files itself, applies the petrophysical conventions of the
instruction and compares, sample by sample, the agent's VSH, PHIE, SW and PAY curves
(re-read with lasio) and, zone by zone, its net pay table. The crux gate is that the porosity
and shale-volume curves were computed, on the right depths, for every well.
"""

from __future__ import annotations

import csv
import io
import json

import lasio
import numpy as np

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    load_csv,
    match_rows,
    read_text,
    rows_by,
)

WELLS = ["W-1", "W-2", "W-3"]
CURVES = ["VSH", "PHIE", "SW", "PAY"]
LOG_NULLS = (-999.25, -9999.0, -9999.25)
CRUX_TOL, CRUX_SHARE = 0.02, 0.90
TOL, SHARE = 0.005, 0.99
# A fifth of the finest sampling step (0.15 m = 0.49 ft): each row still names one input
# sample, and depths rounded to 0.1 ft or converted with the US survey foot pass.
DEPTH_TOL_FT = 0.1
M_TO_FT = 1 / 0.3048


def raw_well(path) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    las = lasio.read(str(path))
    unit = las.curves[0].unit.strip().upper()
    depth = np.asarray(las.index, dtype=float) * (M_TO_FT if unit.startswith("M") else 1.0)
    logs = {}
    for m in ("GR", "RHOB", "RT", "CALI"):
        x = np.asarray(las[m], dtype=float).copy()
        x[np.isin(np.round(x, 2), LOG_NULLS)] = np.nan
        logs[m] = x
    return depth, logs


def interpret(depth: np.ndarray, logs: dict, p: dict, well: str) -> dict[str, np.ndarray]:
    wp = p["wells"][well]
    igr = np.clip((logs["GR"] - wp["gr_clean_api"]) / (wp["gr_shale_api"] - wp["gr_clean_api"]), 0, 1)
    vsh = 0.083 * (np.power(2.0, 3.7 * igr) - 1)
    span = p["matrix_density_g_cc"] - p["fluid_density_g_cc"]
    phie = np.maximum((p["matrix_density_g_cc"] - logs["RHOB"]) / span
                      - vsh * (p["matrix_density_g_cc"] - p["shale_density_g_cc"]) / span, 0.0)
    temp = p["surface_temperature_f"] + depth * p["geothermal_gradient_f_per_100ft"] / 100
    rw = p["rw_ohmm"] * (p["rw_temperature_f"] + 6.77) / (temp + 6.77)
    safe = np.where(phie > 0, phie, 1.0)
    sw = np.where(phie > 0, (p["archie_a"] * rw / (safe ** p["archie_m"] * logs["RT"])) ** (1 / p["archie_n"]), 1.0)
    sw = np.minimum(sw, 1.0)
    missing = np.any([np.isnan(logs[m]) for m in logs], axis=0)
    washout = logs["CALI"] - p["bit_size_in"] > p["washout_threshold_in"]
    c = p["cutoffs"]
    pay = ~missing & ~washout & (vsh <= c["vsh_max"]) & (phie >= c["phie_min"]) & (sw <= c["sw_max"])
    return {"VSH": vsh, "PHIE": phie, "SW": sw, "PAY": pay.astype(float), "missing": missing,
            "washout": washout & ~missing, "depth": depth}


def agent_well(ctx: GradeContext, well: str) -> tuple[dict | None, Outcome]:
    name = f"{well}_petro.las"
    text, ok = read_text(ctx.out(name))
    if text is None:
        return None, ok
    try:
        las = lasio.read(io.StringIO(text))
        unit = las.curves[0].unit.strip().upper()
        # A log may be written bottom-up: rows are compared in depth order.
        order = np.argsort(np.asarray(las.index, dtype=float), kind="stable")
        got = {"depth": np.asarray(las.index, dtype=float)[order], "unit": unit}
        for m in CURVES:
            got[m] = np.asarray(las[m], dtype=float)[order]
    except Exception as e:  # lasio raises many types on malformed files
        return None, Outcome(False, f"{name} does not read as LAS with {CURVES}: {str(e)[:200]}")
    return got, Outcome(True, f"{name}: {got['depth'].size} samples, depth unit {unit}")


def share_within(a: np.ndarray, b: np.ndarray, tol: float) -> float:
    ok = np.abs(a - b) <= tol + 1e-9
    return float(ok.mean()) if ok.size else 0.0


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    p = json.loads((ctx.inputs / "parameters.json").read_text())
    ref, got, reads = {}, {}, []
    for well in WELLS:
        depth, logs = raw_well(ctx.inputs / f"{well}.las")
        ref[well] = interpret(depth, logs, p, well)
        got[well], ok = agent_well(ctx, well)
        if got[well] is not None:
            g, want = got[well], ref[well]["depth"]
            if g["unit"] not in ("FT", "F", "FEET"):
                ok, got[well] = Outcome(False, f"{well}: depth unit {g['unit']!r}, expected FT"), None
            elif g["depth"].size != want.size or not np.all(np.abs(g["depth"] - want) <= DEPTH_TOL_FT):
                ok, got[well] = Outcome(False, f"{well}: depths differ from the input's samples in feet",
                                        expected=f"{want.size} samples {want[0]:.2f}-{want[-1]:.2f} ft",
                                        seen=f"{g['depth'].size} samples"), None
        reads.append((well, ok))
    r.gate("each well's _petro.las reads with VSH, PHIE, SW, PAY on the input's samples, depth in feet", all_of(reads))

    def curve_outcome(curves: list[str], tol: float, share: float) -> Outcome:
        parts = []
        for well in WELLS:
            g, w = got[well], ref[well]
            if g is None:
                parts.append((well, Outcome(False, "no curves")))
                continue
            valid = ~w["missing"]
            for m in curves:
                s = share_within(g[m][valid], w[m][valid], tol)
                parts.append((f"{well} {m}", Outcome(s >= share, f"{s:.1%} of {int(valid.sum())} samples within {tol}",
                                                     expected=f">= {share:.0%}", seen=round(s, 4))))
        return all_of(parts)

    r.gate("PHIE and VSH computed: within 0.02 at 90% of valid samples in every well",
           curve_outcome(["VSH", "PHIE"], CRUX_TOL, CRUX_SHARE))
    # 0.005 v/v is the stated curve precision; 1 % of samples is slack for threshold
    # conventions at clip points.
    r.check("VSH and PHIE curves within 0.005 at 99 % of valid samples", 3, curve_outcome(["VSH", "PHIE"], TOL, SHARE))
    r.check("SW curve within 0.005 at 99 % of valid samples", 3, curve_outcome(["SW"], TOL, SHARE))
    r.check("PAY flag agrees at 99 % of valid samples", 2, curve_outcome(["PAY"], 0.0, SHARE))

    def flagged(key: str, label: str) -> Outcome:
        parts = []
        for well in WELLS:
            g, w = got[well], ref[well]
            sel = w[key]
            if not sel.any():
                continue
            if g is None:
                parts.append((well, Outcome(False, "no curves")))
                continue
            bad = int(np.sum(g["PAY"][sel] > 0))
            if key == "missing":
                bad += int(np.sum(~np.isnan(g["SW"][sel])))
            parts.append((well, Outcome(bad == 0, f"{int(sel.sum())} {label} samples, {bad} wrongly handled")))
        return all_of(parts)

    r.check("samples with a missing log value are null in SW and not pay", 1, flagged("missing", "null-input"))
    r.check("bad-hole (washed-out) samples are not pay", 1, flagged("washout", "bad-hole"))

    with (ctx.inputs / "zone_tops.csv").open() as fh:
        tops = list(csv.DictReader(fh))
    want = {}
    for z in tops:
        w = ref[z["well"]]
        d = w["depth"]
        step = float(np.median(np.diff(d)))
        pay = (d >= float(z["top_md_ft"])) & (d < float(z["base_md_ft"])) & (w["PAY"] > 0)
        want[(z["well"], z["zone"])] = {
            "net_pay_ft": float(pay.sum() * step),
            "phie_avg": float(w["PHIE"][pay].mean()) if pay.any() else 0.0,
            "sw_avg": float(w["SW"][pay].mean()) if pay.any() else 0.0,
            "hcpv_ft": float((w["PHIE"][pay] * (1 - w["SW"][pay])).sum() * step)}
    table, ok_t = load_csv(ctx.out("netpay.csv"), required_columns=["well", "zone", "net_pay_ft", "phie_avg", "sw_avg", "hcpv_ft"])
    rows = rows_by(table, ("well", "zone"))
    r.check("netpay.csv: one row per well and zone", 1, rows.coverage(want) if ok_t else ok_t)
    # 1 ft: two half-foot samples, a threshold decision either way at a cutoff.
    r.check("net pay of every zone within 1 ft", 3, match_rows(rows, want, ["net_pay_ft"], abs=1.0) if ok_t else ok_t)
    # HC pore-feet: 3 % of the zone's figure, or 0.05 ft for thin pay.
    r.check("hydrocarbon pore-feet of every zone within 3 %", 2,
            match_rows(rows, want, ["hcpv_ft"], rel=0.03, abs=0.05) if ok_t else ok_t)
    r.check("average PHIE and SW of the pay of every zone within 0.005 and 0.01", 1, all_of([
        ("phie_avg", match_rows(rows, want, ["phie_avg"], abs=0.005)),
        ("sw_avg", match_rows(rows, want, ["sw_avg"], abs=0.01)),
    ]) if ok_t else ok_t)
    return r
