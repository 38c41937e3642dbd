"""Seeded generator of inputs/ and reference/ for adjuvant-colon-dfs-sap: python3 generate.py --out DIR.

The subjects start from the adjuvant colon cancer trial shipped with R's survival package
(`survival::colon`: levamisole, levamisole + 5-FU or observation after resection of stage
B/C colon cancer), perturbed with a seed so that the published analyses of `colon` are not the
answer: a random 4 % of subjects are left out, each subject's recurrence and death times are
stretched by one factor drawn from 0.8 to 1.25 (their order and ties kept) and each age moved
by up to 2 years. They are issued as an ADaM-style ADSL/ADTTE pair with new subject identifiers,
seeded randomisation dates, calendar event dates (AVAL not given) and the CDISC censoring flag
(CNSR = 1 for censored).

The reference is computed by R survival from the perturbed source rows (recurrence and death
records per subject) rather than from the exported CSVs, so it checks the export and the
DFS derivation of the oracle as well as its statistics."""

import argparse
import csv
import datetime as dt
import io
import json
import random
import subprocess
import tempfile
from pathlib import Path

SEED = 35
CANARY = "da81922a-8a86-4b1f-b50a-ea31df2f2aab"
STUDY = "CRC-ADJ-03"
HERE = Path(__file__).resolve().parent
DROP_FRACTION = 0.04
STRETCH = (0.8, 1.25)
AGE_SHIFT = 2
ARMS = {"Obs": ("OBS", "Observation"), "Lev": ("LEV", "Levamisole"), "Lev+5FU": ("LEV5FU", "Levamisole + 5-FU")}

DUMP_R = r"""
suppressPackageStartupMessages(library(survival))
d1 <- colon[colon$etype == 1, ]; d2 <- colon[colon$etype == 2, ]
m <- merge(d1, d2[, c("id", "time", "status")], by = "id", suffixes = c(".r", ".d"))
m <- m[order(m$id), c("id", "rx", "sex", "age", "obstruct", "perfor", "adhere", "nodes",
                      "differ", "extent", "surg", "time.r", "status.r", "time.d", "status.d")]
write.csv(m, stdout(), row.names = FALSE, na = "")
"""

REFERENCE_R = r"""
source(file.path(Sys.getenv("TASK_DIR"), "solution", "analysis.R"))
args <- commandArgs(trailingOnly = TRUE)
m <- read.csv(args[3], stringsAsFactors = FALSE)
a <- data.frame(
  ARMCD = c(Obs = "OBS", Lev = "LEV", "Lev+5FU" = "LEV5FU")[as.character(m$rx)],
  dfs_d = m$time.r, dfs_e = as.integer(m$status.r == 1 | m$status.d == 1),
  os_d = m$time.d, os_e = m$status.d, AGE = m$age, MALE = m$sex,
  OBSTRUCT = m$obstruct, PERFOR = m$perfor, ADHERE = m$adhere, NODES = m$nodes,
  DIFFER = c("WELL", "MODERATE", "POOR")[m$differ],
  EXTGRP = ifelse(m$extent <= 2, "SUBMUCOSA/MUSCLE", ifelse(m$extent == 3, "SEROSA", "CONTIGUOUS")),
  SURGINT = ifelse(m$surg == 1, "LONG", "SHORT"))
stopifnot(all(m$time.r <= m$time.d), all(m$status.d == 0 | m$status.r == 1 | m$time.r == m$time.d))
analyse(a, args[1], args[2])
"""


def rscript(code: str, *args: str, env_task: str = "") -> str:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "s.R"
        script.write_text(code)
        env = {"TASK_DIR": env_task, "PATH": "/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8"}
        return subprocess.run(["Rscript", str(script), *args], check=True, capture_output=True, text=True, env=env).stdout


def kv_to_nested(text: str) -> dict:
    out: dict = {}
    for line in text.splitlines():
        key, value = line.split("\t")
        *path, leaf = key.split(".")
        node = out
        for p in path:
            node = node.setdefault(p, {})
        if value == "NA":
            node[leaf] = None
        elif leaf in ("violating", "strata_added"):
            node[leaf] = sorted(v for v in value.split(",") if v)
        else:
            is_count = leaf in ("n", "events") or path[0] in ("itt_n", "dfs_events") or path[-1] == "events"
            node[leaf] = int(value) if is_count else float(value)
    return out


def flatten(tree: dict, prefix: str = "") -> dict:
    flat = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            flat.update(flatten(v, f"{prefix}{k}."))
        else:
            flat[prefix + k] = v
    return flat


def perturb(rows: list[dict], rng: random.Random) -> list[dict]:
    """Leave out a few subjects, stretch each one's times by one factor, shift ages."""
    kept = []
    for r in rows:
        if rng.random() < DROP_FRACTION:
            continue
        factor = rng.uniform(*STRETCH)
        r = dict(r)
        for key in ("time.r", "time.d"):
            r[key] = str(max(1, round(int(r[key]) * factor)))
        r["age"] = str(int(r["age"]) + rng.randint(-AGE_SHIFT, AGE_SHIFT))
        kept.append(r)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    rows = perturb(list(csv.DictReader(io.StringIO(rscript(DUMP_R)))), rng)

    sites = sorted(rng.sample(range(101, 190), 38))
    start, span = dt.date(1984, 3, 1), (dt.date(1987, 10, 31) - dt.date(1984, 3, 1)).days
    used, adsl, adtte = set(), [], []
    for r in rows:
        while True:
            site = rng.choice(sites)
            uid = f"{STUDY}-{site}-{rng.randint(1, 999):03d}"
            if uid not in used:
                used.add(uid)
                break
        rand = start + dt.timedelta(days=rng.randint(0, span))
        armcd, arm = ARMS[r["rx"]]
        adsl.append({
            "STUDYID": STUDY, "USUBJID": uid, "SITEID": str(site), "ITTFL": "Y",
            "ARMCD": armcd, "ARM": arm, "RANDDT": rand.isoformat(),
            "AGE": r["age"], "SEX": "M" if r["sex"] == "1" else "F",
            "OBSTRUCT": "Y" if r["obstruct"] == "1" else "N",
            "PERFOR": "Y" if r["perfor"] == "1" else "N",
            "ADHERE": "Y" if r["adhere"] == "1" else "N",
            "NODES": r["nodes"],
            "DIFFER": {"1": "WELL", "2": "MODERATE", "3": "POOR", "": ""}[r["differ"]],
            "EXTENT": {"1": "SUBMUCOSA", "2": "MUSCLE", "3": "SEROSA", "4": "CONTIGUOUS STRUCTURES"}[r["extent"]],
            "SURGINT": "LONG" if r["surg"] == "1" else "SHORT",
        })
        # ADT - STARTDT + 1 = the trial's analysis day count.
        t_r, t_d = int(r["time.r"]), int(r["time.d"])
        rec, death = r["status.r"] == "1", r["status.d"] == "1"
        if rec:
            ttr = ("0", "RECURRENCE", "")
        elif death and t_d == t_r:
            ttr = ("1", "DEATH WITHOUT DOCUMENTED RECURRENCE", "DATE OF DEATH")
        else:
            ttr = ("1", "NO RECURRENCE", "LAST DISEASE ASSESSMENT")
        os_ = ("0", "DEATH", "") if death else ("1", "ALIVE", "LAST KNOWN ALIVE DATE")
        for paramcd, param, t, (cnsr, evnt, cnsdt) in (
            ("OS", "Overall Survival", t_d, os_),
            ("TTR", "Time to Recurrence", t_r, ttr),
        ):
            adtte.append({
                "STUDYID": STUDY, "USUBJID": uid, "PARAMCD": paramcd, "PARAM": param,
                "STARTDT": rand.isoformat(), "ADT": (rand + dt.timedelta(days=t - 1)).isoformat(),
                "CNSR": cnsr, "EVNTDESC": evnt, "CNSDTDSC": cnsdt,
            })
    adsl.sort(key=lambda x: x["USUBJID"])
    adtte.sort(key=lambda x: (x["USUBJID"], x["PARAMCD"]))

    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    for name, table in (("adsl.csv", adsl), ("adtte.csv", adtte)):
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(table[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(table)
        (out / "inputs" / name).write_text(buf.getvalue())

    with tempfile.TemporaryDirectory() as tmp:
        kv, forest, source = Path(tmp) / "kv.txt", Path(tmp) / "forest.csv", Path(tmp) / "source.csv"
        with open(source, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        rscript(REFERENCE_R, str(kv), str(forest), str(source), env_task=str(HERE))
        results = kv_to_nested(kv.read_text())
        forest_rows = list(csv.DictReader(io.StringIO(forest.read_text())))
    # Flat dotted keys: the nested key lines would repeat the instruction's schema verbatim.
    ref = {"canary": CANARY, "results": flatten(results), "forest": forest_rows}
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
