"""Oracle model builder: clean the bore records, make the Phase-I decisions, and write the
X̄-R study as a workbook of formulas (LibreOffice computes it). --mistake builds the fixtures'
wrong variants."""

import argparse
import csv
import json
import re
from pathlib import Path

from openpyxl import Workbook

N = 5
CONSTANTS = {"n": 5, "A2": 0.577, "D3": 0, "D4": 2.114, "d2": 2.326}
INCH_MM = 25.4
# Log entries that name a cause of process change, and the samples they cover.
CAUSE = re.compile(r"chipped|keying error|coolant", re.I)
ONE = re.compile(r"the (\d\d:\d\d) sample")
SPAN = re.compile(r"samples (\d\d:\d\d) to (\d\d:\d\d)")


def read_study(inputs: Path, mistake: str) -> tuple[dict[int, list[float]], dict[int, str]]:
    units = {r["gauge_id"]: r["display_unit"] for r in csv.DictReader(open(inputs / "gauges.csv"))}
    rows, times = {}, {}
    for r in csv.DictReader(open(inputs / "bore_measurements.csv")):
        k = int(r["subgroup"])
        xs = [float(r[f"x{i}"]) for i in range(1, N + 1)]
        if units[r["gauge_id"]] == "in" and mistake != "all-data":
            xs = [x * INCH_MM for x in xs]
        if mistake == "all-data":
            k = len(rows) + 1  # every record taken as its own subgroup
        if k in rows and rows[k] == xs:
            if mistake == "duplicate-kept":
                k += 100  # kept under a number of its own
            else:
                continue  # the same subgroup keyed twice
        rows[k], times[k] = xs, r["sampled_at"][-5:]
    return rows, times


def caused(inputs: Path, times: dict[int, str], spans_only: bool = False) -> set[int]:
    out = set()
    for r in csv.DictReader(open(inputs / "shift_log.csv")):
        if not CAUSE.search(r["entry"]):
            continue
        spans = [(a, b) for a, b in SPAN.findall(r["entry"])]
        spans += [] if spans_only else [(a, a) for a in ONE.findall(r["entry"])]
        out |= {k for k, t in times.items() for a, b in spans if a <= t <= b}
    return out


def signals(rows: dict[int, list[float]], keep: list[int]) -> list[int]:
    xbb = sum(sum(rows[k]) / N for k in keep) / len(keep)
    rb = sum(max(rows[k]) - min(rows[k]) for k in keep) / len(keep)
    c = CONSTANTS
    return [k for k in keep if abs(sum(rows[k]) / N - xbb) > c["A2"] * rb
            or not c["D3"] * rb <= max(rows[k]) - min(rows[k]) <= c["D4"] * rb]


def phase1(rows: dict[int, list[float]], cause: set[int], mistake: str, window: set[int]) -> tuple[list[int], list[int]]:
    keep = sorted(rows)
    trial = signals(rows, keep)
    if mistake == "all-data":
        return trial, []
    if mistake == "whole-window":  # the trial signals with a cause, and the logged suspect window wholesale
        return trial, sorted({k for k in trial if k in cause} | window)
    while drop := [k for k in signals(rows, keep) if k in cause]:
        keep = [k for k in keep if k not in drop]
        if mistake == "one-pass":
            break
    if mistake == "exclude-all-logged":
        keep = [k for k in keep if k not in cause]
    return trial, sorted(set(rows) - set(keep))


def write_workbook(path: Path, rows: dict[int, list[float]], excluded: list[int], mistake: str) -> None:
    wb = Workbook()
    data = wb.active
    data.title = "Data"
    data.append(["subgroup", "x1", "x2", "x3", "x4", "x5", "excluded", "xbar", "R", "ss_about_grand_mean"])
    last = len(rows) + 1
    for i, k in enumerate(sorted(rows), start=2):
        data.append([k, *rows[k], int(k in excluded), f"=AVERAGE(B{i}:F{i})", f"=MAX(B{i}:F{i})-MIN(B{i}:F{i})",
                     f"=DEVSQ(B{i}:F{i})+5*(H{i}-Limits!$B$7)^2"])
    ex, xb, rr, ss = (f"Data!${c}$2:${c}${last}" for c in "GHIJ")
    lim = wb.create_sheet("Limits")
    lim.append(["name", "value"])
    for name, v in CONSTANTS.items():
        lim.append([name, v])
    lim.append(["xbar_CL", f"=AVERAGEIF({ex},0,{xb})"])      # B7
    lim.append(["xbar_UCL", "=B7+B3*B10"])
    lim.append(["xbar_LCL", "=B7-B3*B10"])
    lim.append(["R_CL", f"=AVERAGEIF({ex},0,{rr})"])         # B10
    lim.append(["R_UCL", "=B5*B10"])
    lim.append(["R_LCL", "=B4*B10"])
    cap = wb.create_sheet("Capability")
    lsl, usl = (24.9895, 25.0105) if mistake == "symmetric-spec" else (25.0, 25.021)
    sw = "B5" if mistake == "overall-sigma-cpk" else "B4"
    rows_cap = [
        ("LSL", lsl), ("USL", usl),
        ("sigma_within", "=Limits!B10/Limits!B6"),                                    # B4
        ("sigma_overall", f"=SQRT(SUMIF({ex},0,{ss})/(Limits!B2*COUNTIF({ex},0)-1))"),  # B5
        ("Cp", f"=(B3-B2)/(6*{sw})"),
        ("Cpk", f"=MIN(B3-Limits!B7,Limits!B7-B2)/(3*{sw})"),
        ("Pp", "=(B3-B2)/(6*B5)"),
        ("Ppk", "=MIN(B3-Limits!B7,Limits!B7-B2)/(3*B5)"),
        ("ppm_expected", "=(NORMSDIST((B2-Limits!B7)/B4)+1-NORMSDIST((B3-Limits!B7)/B4))*1000000"),
    ]
    cap.append(["name", "value"])
    for row in rows_cap:
        cap.append(list(row))
    wb.save(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inputs", type=Path)
    ap.add_argument("workbook", type=Path)
    ap.add_argument("decisions", type=Path)
    ap.add_argument("--mistake", default="", choices=["", "one-pass", "all-data", "symmetric-spec", "overall-sigma-cpk",
                                                   "exclude-all-logged", "duplicate-kept", "whole-window"])
    a = ap.parse_args()
    rows, times = read_study(a.inputs, a.mistake)
    trial, excluded = phase1(rows, caused(a.inputs, times), a.mistake, caused(a.inputs, times, spans_only=True))
    write_workbook(a.workbook, rows, excluded, a.mistake)
    a.decisions.write_text(json.dumps({"n_subgroups": len(rows), "trial_signals": trial,
                                       "excluded_subgroups": excluded}))


if __name__ == "__main__":
    main()
