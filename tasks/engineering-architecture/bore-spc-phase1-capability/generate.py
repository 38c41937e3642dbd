"""Seeded generator of inputs/ and reference/ for bore-spc-phase1-capability: python3 generate.py --out DIR.

A CNC boring operation sampled every 30 minutes (30 subgroups of 5) on one day. Hidden in the
records: one subgroup measured on an inch bore gauge, one subgroup keyed twice, one digit-slip
data-entry error, a tool-wear drift whose later subgroups only signal once the first signals are
removed (the tool check logs a suspect window from one sample before the drift, which never
signals), and a logged coolant event on a subgroup that never signals (neither to be removed).
"""

import argparse
import json
import math
import random
from datetime import datetime, timedelta
from pathlib import Path

SEED = 1
CANARY = "30d687dd-0d7d-4866-9c0a-92e86d5de49d"
N_SUB, N = 30, 5
A2, D3, D4, D2 = 0.577, 0.0, 2.114, 2.326
LSL, USL = 25.000, 25.021  # Ø25 H7: IT7 = 21 µm for 18-30 mm, fundamental deviation H = 0
MU, SIGMA_W, SIGMA_B = 25.0098, 0.0028, 0.0006
DRIFT = [0.0050, 0.0068, 0.0080, 0.0090]
INCH = 25.4
START = datetime(2026, 3, 9, 6, 0)


def hm(t: datetime) -> str:
    return t.strftime("%H:%M")


def limits(rows: dict[int, list[float]], keep: list[int]) -> dict[str, float]:
    xbb = sum(sum(rows[k]) / N for k in keep) / len(keep)
    rb = sum(max(rows[k]) - min(rows[k]) for k in keep) / len(keep)
    return {"xbar_CL": xbb, "xbar_UCL": xbb + A2 * rb, "xbar_LCL": xbb - A2 * rb,
            "R_CL": rb, "R_UCL": D4 * rb, "R_LCL": D3 * rb}


def signals(rows: dict[int, list[float]], keep: list[int], lim: dict[str, float]) -> list[int]:
    out = []
    for k in keep:
        xb, r = sum(rows[k]) / N, max(rows[k]) - min(rows[k])
        if not lim["xbar_LCL"] <= xb <= lim["xbar_UCL"] or not lim["R_LCL"] <= r <= lim["R_UCL"]:
            out.append(k)
    return out


def phase1(rows: dict[int, list[float]], caused: set[int]) -> tuple[list[int], list[int], list[list[int]]]:
    """Trial signals, the removed subgroups, and the removals of each pass."""
    keep = sorted(rows)
    trial = signals(rows, keep, limits(rows, keep))
    passes = []
    while True:
        drop = [k for k in signals(rows, keep, limits(rows, keep)) if k in caused]
        if not drop:
            return trial, sorted(set(sorted(rows)) - set(keep)), passes
        passes.append(drop)
        keep = [k for k in keep if k not in drop]


def phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def capability(rows: dict[int, list[float]], keep: list[int]) -> dict[str, float]:
    lim = limits(rows, keep)
    xs = [x for k in keep for x in rows[k]]
    m = sum(xs) / len(xs)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    sw = lim["R_CL"] / D2
    return {"sigma_within": sw, "sigma_overall": s, "Cp": (USL - LSL) / (6 * sw),
            "Cpk": min(USL - m, m - LSL) / (3 * sw), "Pp": (USL - LSL) / (6 * s),
            "Ppk": min(USL - m, m - LSL) / (3 * s),
            "ppm_expected": 1e6 * (phi((LSL - m) / sw) + 1 - phi((USL - m) / sw))}


def draw(rng: random.Random) -> dict | None:
    d0 = rng.randint(17, 21)
    drift = {d0 + i: DRIFT[i] for i in range(4)}
    free = [k for k in range(3, N_SUB) if k not in drift and k not in (d0 - 1, d0 + 4)]
    slip, inch, cool = rng.sample(free, 3)
    rows = {}
    for k in range(1, N_SUB + 1):
        centre = MU + rng.gauss(0, SIGMA_B) + drift.get(k, 0.0)
        rows[k] = [round(rng.gauss(centre, SIGMA_W), 3) for _ in range(N)]
    j = rng.randrange(N)
    text = f"{rows[slip][j]:.3f}"  # a digit slip: the 2nd and 3rd decimals keyed as 1st and 2nd
    keyed = float(text[:3] + text[4] + text[3] + text[5])
    if abs(keyed - rows[slip][j]) < 0.05:
        return None
    rows[slip][j] = keyed
    caused = {slip, cool, *drift}
    trial, removed, passes = phase1(rows, caused)
    if len(passes) < 2 or cool in trial or set(trial) - caused or slip not in trial:
        return None
    if set(signals(rows, sorted(set(rows) - set(removed)), limits(rows, sorted(set(rows) - set(removed))))):
        return None
    # The tool check's suspect window starts at the last good check, a sample before the drift:
    # that sample never signals, so removing the logged window wholesale is not Phase I.
    if phase1(rows, caused | {d0 - 1})[1] != removed:
        return None
    keep = sorted(set(rows) - set(removed))
    base = limits(rows, keep)
    # The duplicated subgroup: the retained one that moves the limits most when counted twice.
    dup = max((k for k in keep if k != inch),
              key=lambda k: abs(sum(rows[k]) / N - base["xbar_CL"]))
    twice = limits({**rows, 0: rows[dup]}, [*keep, 0])
    if abs(twice["xbar_CL"] - base["xbar_CL"]) < 6e-5:
        return None
    return {"rows": rows, "drift": drift, "slip": slip, "inch": inch, "cool": cool, "dup": dup,
            "trial": trial, "removed": removed, "passes": passes, "keep": keep}


def write_inputs(out: Path, g: dict) -> None:
    rows = g["rows"]
    times = {k: START + timedelta(minutes=30 * (k - 1)) for k in rows}
    lines = ["subgroup,sampled_at,operator,gauge_id,x1,x2,x3,x4,x5"]

    def line(k: int, entered: datetime | None = None) -> str:
        op = "M. Okafor" if times[k].hour < 14 else "J. Lindqvist"
        if k == g["inch"]:
            vals = [f"{round(x / INCH / 0.00005) * 0.00005:.5f}" for x in rows[k]]
            gauge = "BG-07"
        else:
            vals, gauge = [f"{x:.3f}" for x in rows[k]], "AG-02"
        return ",".join([str(k), times[k].strftime("%Y-%m-%d %H:%M"), op, gauge, *vals])

    for k in sorted(rows):
        lines.append(line(k))
    lines.insert(len(lines) - 2, line(g["dup"]))  # re-keyed late from the paper sheet
    (out / "inputs" / "bore_measurements.csv").write_text("\n".join(lines) + "\n")
    (out / "inputs" / "gauges.csv").write_text(
        "gauge_id,description,resolution,display_unit,calibrated_until\n"
        "AG-02,air plug gauge Ø25 with digital column,0.001,mm,2026-06-30\n"
        "BG-07,dial bore gauge 0.75-1.5 in (toolroom spare),0.00005,in,2026-11-15\n")
    d = sorted(g["drift"])
    t = {k: hm(v) for k, v in times.items()}
    log = [
        (START - timedelta(minutes=10), "A", "Start-up: warm-up cycle run; AG-02 set on master ring 25.0000 mm, OK"),
        (times[g["inch"]] - timedelta(minutes=5), "A" if times[g["inch"]].hour < 14 else "B",
         f"AG-02 column battery flat; the {t[g['inch']]} sample measured with BG-07 from the toolroom"),
        (times[g["cool"]] + timedelta(minutes=8), "A" if times[g["cool"]].hour < 14 else "B",
         f"Coolant concentration read 3.1 % (target 6 %) after the {t[g['cool']]} sample; topped up"),
        (datetime(2026, 3, 9, 14, 0), "B", "Shift handover A to B; no open issues"),
        (times[g["slip"]] + timedelta(hours=2), "A" if times[g["slip"]].hour < 12 else "B",
         f"QA audit: one reading on the {t[g['slip']]} sample sheet does not match the part traveller "
         "(keying error); the original reading cannot be recovered"),
        (times[d[-1]] + timedelta(minutes=12), "B",
         f"Tool check: boring insert T12 found with a chipped edge (last good check {hm(times[d[0] - 1] - timedelta(minutes=15))}); "
         f"samples {t[d[0] - 1]} to {t[d[-1]]} suspect; insert replaced, offset reset"),
        (datetime(2026, 3, 9, 18, 40), "B", "Routine AG-02 check on master ring 25.0000 mm, OK (battery replaced at 08:20)"),
    ]
    log.sort(key=lambda e: e[0])
    text = "logged_at,shift,entry\n" + "".join(
        f'{e[0].strftime("%Y-%m-%d %H:%M")},{e[1]},"{e[2]}"\n' for e in log)
    (out / "inputs" / "shift_log.csv").write_text(text)
    (out / "inputs" / "drawing_notes.txt").write_text(
        "Part 4471-220 valve body, op 40 (finish bore)\n"
        "Bore A: Ø25 H7, Ra 0.8, perpendicular to datum B within 0.01\n"
        "Characteristic class: key (SC). Capability required: Cpk >= 1.33 (PPAP), Ppk >= 1.67 initial\n"
        "General tolerances ISO 2768-m. Dimensions in mm.\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    while (g := draw(rng)) is None:
        pass
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    # The study's data in mm: the inch subgroup converted from its recorded (rounded) readings.
    rows = dict(g["rows"])
    rows[g["inch"]] = [round(x / INCH / 0.00005) * 0.00005 * INCH for x in rows[g["inch"]]]
    trial, removed, passes = phase1(rows, {g["slip"], g["cool"], *g["drift"], min(g["drift"]) - 1})
    keep = sorted(set(rows) - set(removed))
    write_inputs(out, g)
    ref = {
        "canary": CANARY,
        "spec": {"LSL": LSL, "USL": USL},
        "n_subgroups": len(rows),
        "trial_signals": trial,
        "excluded_subgroups": removed,
        "exclusion_passes": passes,
        "traps": {"inch_subgroup": g["inch"], "duplicated_subgroup": g["dup"], "digit_slip_subgroup": g["slip"],
                  "logged_but_in_control": g["cool"], "drift_subgroups": sorted(g["drift"]),
                  "logged_suspect_window": list(range(min(g["drift"]) - 1, max(g["drift"]) + 1))},
        "limits": {k: round(v, 7) for k, v in limits(rows, keep).items()},
        "capability": {k: round(v, 6) for k, v in capability(rows, keep).items()},
        "data": {str(k): [round(x, 6) for x in rows[k]] for k in sorted(rows)},
    }
    (out / "reference" / "expected.json").write_text(json.dumps(ref, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
