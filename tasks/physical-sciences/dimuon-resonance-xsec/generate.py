"""Seeded generator: NanoAOD-like dimuon ntuples (two data streams, a skimmed NLO signal MC),
the certification JSON and the per-lumisection luminosity table; and the reference analysis."""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import shutil
import sys
import types
import uuid
from pathlib import Path

import awkward as ak
import numpy as np
import uproot

HERE = Path(__file__).resolve().parent
CANARY = "4492aace-9978-4ee2-b783-47b21dc38d70"
SEED = 151_2026
MUON_MASS = 0.1056583755
MC_MASSES = (45, 50, 55)
RUNS = {362104: 180, 362106: 240, 362111: 150}  # run -> number of lumisections
BAD_LS = {362104: [(61, 84)], 362106: [(1, 12), (150, 171)], 362111: [(97, 150)]}
# Decimals kept in the reference: far finer than the grader's tolerances, far coarser than the
# last digits the fits move by with NumPy's SIMD kernels (with and without AVX-512 the HESSE
# errors differ at 1e-7), so that the reference is byte-identical on any x86-64 machine.
REF_DECIMALS = {"mass_GeV": 6, "mass_stat_GeV": 6, "resolution_rel": 10, "signal_yield": 4,
                "signal_yield_stat": 2, "efficiency": 10, "luminosity_pb": 9, "xsec_br_pb": 4,
                "xsec_br_stat_pb": 3}


def two_body(rng: np.random.Generator, mass: np.ndarray) -> tuple[np.ndarray, ...]:
    """Lab-frame (pt, eta, phi) of the two muons of parents of the given masses."""
    n = len(mass)
    ppt = rng.gamma(2.0, 5.0, n)
    y = rng.normal(0.0, 1.5, n)
    pphi = rng.uniform(-np.pi, np.pi, n)
    mt = np.sqrt(mass**2 + ppt**2)
    parent = np.stack([mt * np.cosh(y), ppt * np.cos(pphi), ppt * np.sin(pphi), mt * np.sinh(y)], 1)
    pstar = np.sqrt(mass**2 / 4 - MUON_MASS**2)
    cos = rng.uniform(-1, 1, n)
    phi = rng.uniform(-np.pi, np.pi, n)
    sin = np.sqrt(1 - cos**2)
    d = np.stack([pstar * sin * np.cos(phi), pstar * sin * np.sin(phi), pstar * cos], 1)
    beta = parent[:, 1:] / parent[:, :1]
    gamma = parent[:, 0] / mass
    estar = mass / 2
    out = []
    for sign in (1.0, -1.0):
        p = sign * d
        bp = (beta * p).sum(1)
        b2 = (beta**2).sum(1)
        coef = np.where(b2 > 0, (gamma - 1) * bp / np.where(b2 > 0, b2, 1), 0.0) + gamma * estar
        lab = p + coef[:, None] * beta
        pt = np.hypot(lab[:, 0], lab[:, 1])
        eta = np.arcsinh(lab[:, 2] / pt)
        out.append((pt, eta, np.arctan2(lab[:, 1], lab[:, 0])))
    return out[0], out[1], ppt


def smear(rng: np.random.Generator, pt: np.ndarray, eta: np.ndarray) -> np.ndarray:
    return pt * (1 + rng.normal(0, 1, len(pt)) * (0.011 + 0.006 * np.abs(eta)))


def events(rng: np.random.Generator, mass: np.ndarray, qcd: bool) -> dict[str, list]:
    """Per-event muon lists: the pair (isolated, opposite sign unless qcd) plus fakes."""
    (pt1, eta1, phi1), (pt2, eta2, phi2), _ = two_body(rng, mass)
    pt1, pt2 = smear(rng, pt1, eta1), smear(rng, pt2, eta2)
    n = len(mass)
    q1 = rng.choice([-1, 1], n)
    q2 = np.where(qcd, rng.choice([-1, 1], n), -q1)
    iso_scale = 0.35 if qcd else 0.025
    cols: dict[str, list] = {k: [] for k in ("pt", "eta", "phi", "charge", "iso", "tight")}
    extra = rng.random(n) < 0.3
    for i in range(n):
        mu = [(pt1[i], eta1[i], phi1[i], q1[i]), (pt2[i], eta2[i], phi2[i], q2[i])]
        if extra[i]:
            mu.append((3 + rng.exponential(7), rng.uniform(-2.6, 2.6), rng.uniform(-np.pi, np.pi),
                       int(rng.choice([-1, 1]))))
        iso = [rng.exponential(iso_scale) if j < 2 else rng.exponential(0.4) for j in range(len(mu))]
        tight = [bool(rng.random() < 0.97) for _ in mu]
        keep = [j for j in range(len(mu)) if abs(mu[j][1]) < 2.6 and mu[j][0] > 3]
        keep.sort(key=lambda j: -mu[j][0])
        cols["pt"].append([round(float(mu[j][0]), 3) for j in keep])
        cols["eta"].append([round(float(mu[j][1]), 4) for j in keep])
        cols["phi"].append([round(float(mu[j][2]), 4) for j in keep])
        cols["charge"].append([int(mu[j][3]) for j in keep])
        cols["iso"].append([round(float(iso[j]), 4) for j in keep])
        cols["tight"].append([tight[j] for j in keep])
    return cols


def triggers(rng: np.random.Generator, c: dict[str, list]) -> dict[str, np.ndarray]:
    n = len(c["pt"])
    iso_mu, dimu, mu8 = np.zeros(n, bool), np.zeros(n, bool), np.zeros(n, bool)
    for i in range(n):
        pts = [p for p, e, s in zip(c["pt"][i], c["eta"][i], c["iso"][i], strict=True) if abs(e) < 2.4]
        isos = [p for p, e, s in zip(c["pt"][i], c["eta"][i], c["iso"][i], strict=True) if abs(e) < 2.4 and s < 0.2]
        iso_mu[i] = any(p > 24 for p in isos) and rng.random() < 0.94
        dimu[i] = len(isos) >= 2 and isos[0] > 17 and isos[1] > 8 and rng.random() < 0.92
        mu8[i] = any(p > 8 for p in pts) and rng.random() < 0.05
    return {"HLT_IsoMu24": iso_mu, "HLT_Mu17_TrkIsoVVL_Mu8_TrkIsoVVL": dimu, "HLT_Mu8": mu8}


def muon_branches(c: dict[str, list]) -> dict[str, ak.Array]:
    return {
        "Muon_pt": ak.values_astype(ak.Array(c["pt"]), np.float32),
        "Muon_eta": ak.values_astype(ak.Array(c["eta"]), np.float32),
        "Muon_phi": ak.values_astype(ak.Array(c["phi"]), np.float32),
        "Muon_charge": ak.values_astype(ak.Array(c["charge"]), np.int32),
        "Muon_pfRelIso04_all": ak.values_astype(ak.Array(c["iso"]), np.float32),
        "Muon_tightId": ak.Array(c["tight"]),
    }


class _FixedClock(datetime.datetime):
    """uproot stamps files and trees with now(): a fixed stamp makes the files byte-reproducible."""

    @classmethod
    def now(cls, tz: object = None) -> _FixedClock:  # type: ignore[override]
        return cls(2026, 7, 14, 3, 12, 51)


def reproducible_uproot() -> None:
    from uproot.writing import _cascade, _cascadentuple, _cascadetree, writable

    for mod in (_cascade, _cascadentuple, _cascadetree, writable):
        mod.datetime = types.SimpleNamespace(datetime=_FixedClock)  # type: ignore[attr-defined]


def write_root(path: Path, trees: dict[str, dict]) -> None:
    ids = iter(range(1, 1000))
    with uproot.recreate(path, compression=uproot.ZLIB(9),
                         uuid_function=lambda: uuid.UUID(int=0x5EED0000 + next(ids))) as f:
        for name, branches in trees.items():
            types = {k: (v.type if isinstance(v, ak.Array) else v.dtype) for k, v in branches.items()}
            f.mktree(name, types).extend(branches)


def event_tree(c: dict[str, list], trig: dict[str, np.ndarray], rows: np.ndarray,
               extra: dict[str, np.ndarray]) -> dict:
    sub = {k: [v[i] for i in rows] for k, v in c.items()}
    mb = muon_branches(sub)
    tree: dict = {k: v[rows] for k, v in extra.items()}
    tree.update({k: v[rows] for k, v in trig.items()})
    tree["Muon"] = ak.zip({k[5:]: v for k, v in mb.items()})
    return tree


def lumi_table(rng: np.random.Generator) -> list[tuple[int, int, float]]:
    return [(run, ls, round(float(rng.uniform(14.0, 22.0)) * 1000, 3))
            for run, n in RUNS.items() for ls in range(1, n + 1)]


def certified(run: int, ls: int) -> bool:
    return run in RUNS and not any(a <= ls <= b for a, b in BAD_LS[run])


def golden_json() -> dict[str, list[list[int]]]:
    out = {}
    for run, n in RUNS.items():
        ranges, start = [], None
        for ls in range(1, n + 2):
            good = ls <= n and certified(run, ls)
            if good and start is None:
                start = ls
            if not good and start is not None:
                ranges.append([start, ls - 1])
                start = None
        out[str(run)] = ranges
    return out


def write_lumi_csv(path: Path, table: list[tuple[int, int, float]]) -> None:
    fills = {362104: 9876, 362106: 9877, 362111: 9881}
    t0 = 1_780_000_000
    with path.open("w", newline="") as f:
        f.write("#Data tag : 24v1 , Norm tag: None\n")
        f.write("#run:fill,ls,time,beamstatus,E(GeV),delivered(/ub),recorded(/ub),avgpu,source\n")
        w = csv.writer(f, lineterminator="\n")
        for k, (run, ls, rec) in enumerate(table):
            stamp = datetime.datetime.fromtimestamp(t0 + 23 * k, datetime.UTC)
            w.writerow([f"{run}:{fills[run]}", f"{ls}:{ls}", stamp.strftime("%m/%d/%y %H:%M:%S"),
                        "STABLE BEAMS", 6800, f"{rec * 1.031:.3f}", f"{rec:.3f}", "38.2", "HFOC"])
        f.write(f"#Summary: {len(table)} lumisections, units /ub\n")


def data_sample(rng: np.random.Generator, true_mass: float,
                table: list[tuple[int, int, float]]) -> tuple[dict, dict]:
    n_sig, n_dy, n_qcd = 3000, 14000, 3000
    mass = np.concatenate([
        np.full(n_sig, true_mass),
        12 + np.minimum(rng.exponential(22.0, n_dy), 100.0),
        12 + np.minimum(rng.exponential(9.0, n_qcd), 100.0),
    ])
    qcd = np.concatenate([np.zeros(n_sig + n_dy, bool), np.ones(n_qcd, bool)])
    order = rng.permutation(len(mass))
    mass, qcd = mass[order], qcd[order]
    c = {k: [] for k in ("pt", "eta", "phi", "charge", "iso", "tight")}
    for flag in (False, True):
        sel = np.flatnonzero(qcd == flag)
        part = events(rng, mass[sel], flag)
        for k in c:
            c[k].extend(part[k])
    # restore the shuffled order: QCD and non-QCD were generated in two blocks
    perm = np.concatenate([np.flatnonzero(~qcd), np.flatnonzero(qcd)])
    inv = np.argsort(perm, kind="stable")
    c = {k: [v[i] for i in inv] for k, v in c.items()}
    trig = triggers(rng, c)
    n = len(mass)
    weights = np.array([rec for _, _, rec in table])
    slot = rng.choice(len(table), n, p=weights / weights.sum())
    run = np.array([table[s][0] for s in slot], np.int32)
    ls = np.array([table[s][1] for s in slot], np.uint32)
    evt = (1_000_000 + np.cumsum(rng.integers(1, 40_000, n))).astype(np.uint64)
    evt = evt[rng.permutation(n)]
    extra = {"run": run, "luminosityBlock": ls, "event": evt}
    order = np.lexsort((evt, ls, run))
    single = order[trig["HLT_IsoMu24"][order]]
    double = order[(trig["HLT_Mu17_TrkIsoVVL_Mu8_TrkIsoVVL"] | trig["HLT_Mu8"])[order]]
    return event_tree(c, trig, single, extra), event_tree(c, trig, double, extra)


def mc_sample(rng: np.random.Generator, mass: float) -> tuple[dict, dict]:
    """NLO-like signal: physical events of weight +w plus low-pT counter-events of weight +w and
    -w that cancel in the weighted sum (as subtraction terms do), so only the weighted sample
    has the physical distribution."""
    n_phys, n_pool = 4000, 3500
    c = events(rng, np.full(n_phys + n_pool, float(mass)), False)
    low = np.flatnonzero(np.array([sum(p) < 40 for p in c["pt"][n_phys:]])) + n_phys
    k = len(low) // 2
    keep = np.concatenate([np.arange(n_phys), low[: 2 * k]])
    sign = np.concatenate([np.ones(n_phys + k), -np.ones(k)])
    order = rng.permutation(len(keep))
    keep, sign = keep[order], sign[order]
    c = {key: [v[i] for i in keep] for key, v in c.items()}
    n = len(keep)
    trig = triggers(rng, c)
    w = (sign * 1843.27).astype(np.float32)
    skim = np.flatnonzero(np.array([sum(p > 8 for p in pts) >= 2 for pts in c["pt"]]))
    extra = {"run": np.ones(n, np.int32), "luminosityBlock": np.ones(n, np.uint32),
             "event": np.arange(1, n + 1, dtype=np.uint64), "genWeight": w}
    runs = {"run": np.array([1], np.int32), "genEventCount": np.array([n], np.int64),
            "genEventSumw": np.array([float(w.astype(np.float64).sum())]),
            "genEventSumw2": np.array([float((w.astype(np.float64) ** 2).sum())])}
    return event_tree(c, trig, skim, extra), runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(HERE))
    out = Path(ap.parse_args().out)
    inputs, reference = out / "inputs", out / "reference"
    for d in (inputs, reference):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    reproducible_uproot()
    rng = np.random.default_rng(SEED)
    true_mass = round(float(rng.uniform(46.0, 54.0)), 3)
    table = lumi_table(rng)
    single, double = data_sample(rng, true_mass, table)
    write_root(inputs / "SingleMuon_Run2024X.root", {"Events": single})
    write_root(inputs / "DoubleMuon_Run2024X.root", {"Events": double})
    for mass in MC_MASSES:
        mc_events, mc_runs = mc_sample(rng, mass)
        write_root(inputs / f"XToMuMu_M{mass}_NLO_skim.root", {"Events": mc_events, "Runs": mc_runs})
    write_lumi_csv(inputs / "lumi_byls.csv", table)
    (inputs / "Cert_Collisions2024X_golden.json").write_text(
        json.dumps(golden_json(), separators=(", ", ": ")) + "\n")
    sys.path.insert(0, str(HERE / "solution"))
    from analyze import analyze  # the reference analysis is the oracle's

    result, cutflow = analyze(inputs)
    result = {k: round(v, REF_DECIMALS[k]) if k in REF_DECIMALS else v for k, v in result.items()}
    expected = {"canary": CANARY, "true_mass_GeV": true_mass, "result": result,
                "cutflow": {step: n for step, n in cutflow}}
    (reference / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
