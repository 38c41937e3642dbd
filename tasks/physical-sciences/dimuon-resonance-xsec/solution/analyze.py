"""Reference analysis: overlap removal, certification, selection, MC efficiency and resolution,
binned extended maximum-likelihood fit with iminuit, cross section times branching ratio."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import awkward as ak
import numpy as np
import uproot
from iminuit import Minuit
from iminuit.cost import ExtendedBinnedNLL
from scipy.special import erf

MUON_MASS = 0.1056583755
MC_MASSES = (45, 50, 55)
WINDOW = (30.0, 80.0)
BIN_WIDTH = 0.25
TRIGGERS = ("HLT_IsoMu24", "HLT_Mu17_TrkIsoVVL_Mu8_TrkIsoVVL")
BRANCHES = ["run", "luminosityBlock", "event", *TRIGGERS, "Muon_pt", "Muon_eta", "Muon_phi",
            "Muon_charge", "Muon_pfRelIso04_all", "Muon_tightId"]


def read(path: Path, extra: tuple[str, ...] = ()) -> ak.Array:
    with uproot.open(path) as f:
        return f["Events"].arrays([*BRANCHES, *extra])


def dimuon(ev: ak.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Masks (two good muons with leading > 20 GeV, opposite sign) and the pair mass."""
    good = ((ev.Muon_tightId) & (ev.Muon_pt > 10) & (abs(ev.Muon_eta) < 2.4)
            & (ev.Muon_pfRelIso04_all < 0.15))
    pt, eta, phi, q = (ev[f"Muon_{k}"][good] for k in ("pt", "eta", "phi", "charge"))
    order = ak.argsort(pt, ascending=False)
    pt, eta, phi, q = pt[order], eta[order], phi[order], q[order]
    two = ak.to_numpy((ak.num(pt) >= 2) & (ak.fill_none(ak.firsts(pt), 0) > 20))
    pad = {k: ak.to_numpy(ak.fill_none(ak.pad_none(v, 2, clip=True), 0.0), allow_missing=False)
           for k, v in (("pt", pt), ("eta", eta), ("phi", phi), ("q", q))}
    p = pad["pt"].astype(np.float64)
    e, f = pad["eta"].astype(np.float64), pad["phi"].astype(np.float64)
    px, py, pz = p * np.cos(f), p * np.sin(f), p * np.sinh(e)
    en = np.sqrt(px**2 + py**2 + pz**2 + MUON_MASS**2)
    m2 = en.sum(1) ** 2 - px.sum(1) ** 2 - py.sum(1) ** 2 - pz.sum(1) ** 2
    mass = np.sqrt(np.clip(m2, 0, None))
    os_ = two & (pad["q"][:, 0] * pad["q"][:, 1] < 0)
    return two, os_, mass


def certified_mask(ev: ak.Array, golden: dict[str, list[list[int]]]) -> np.ndarray:
    run, ls = ak.to_numpy(ev.run), ak.to_numpy(ev.luminosityBlock)
    ok = np.zeros(len(run), bool)
    for r, ranges in golden.items():
        for a, b in ranges:
            ok |= (run == int(r)) & (ls >= a) & (ls <= b)
    return ok


def luminosity_pb(path: Path, golden: dict[str, list[list[int]]]) -> float:
    total = 0.0
    with path.open() as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            run, ls = int(row[0].split(":")[0]), int(row[1].split(":")[0])
            if any(a <= ls <= b for a, b in golden.get(str(run), [])):
                total += float(row[6])
    return total / 1e6  # brilcalc reports /ub


def gauss_cdf(x: np.ndarray, mu: float, sigma: float) -> np.ndarray:
    return 0.5 * (1 + erf((x - mu) / (np.sqrt(2) * sigma)))


def fit_mc(mass: np.ndarray, w: np.ndarray, m0: float) -> float:
    """Relative mass resolution: Gaussian fitted to the weighted MC peak within +-3 GeV."""
    sel = np.abs(mass - m0) < 3
    edges = np.arange(m0 - 3, m0 + 3 + 1e-9, 0.1)
    h = np.histogram(mass[sel], edges, weights=w[sel])[0]
    h2 = np.histogram(mass[sel], edges, weights=w[sel] ** 2)[0]

    def cdf(x: np.ndarray, n: float, mu: float, sigma: float) -> np.ndarray:
        return n * gauss_cdf(x, mu, sigma)

    cost = ExtendedBinnedNLL(np.stack([h, h2], 1), edges, cdf)
    m = Minuit(cost, n=h.sum(), mu=m0, sigma=0.4)
    m.limits["sigma"] = (0.05, 3)
    m.migrad()
    return float(m.values["sigma"]) / m0


def fit_data(mass: np.ndarray, rel: float) -> Minuit:
    edges = np.arange(WINDOW[0], WINDOW[1] + 1e-9, BIN_WIDTH)
    h = np.histogram(mass, edges)[0]
    lo, hi = WINDOW

    def cdf(x: np.ndarray, ns: float, mx: float, nb: float, lam: float) -> np.ndarray:
        norm = np.exp(-lam * lo) - np.exp(-lam * hi)
        return ns * gauss_cdf(x, mx, rel * mx) + nb * (np.exp(-lam * lo) - np.exp(-lam * x)) / norm

    peak = 0.5 * (edges[np.argmax(h)] + edges[np.argmax(h) + 1])
    m = Minuit(ExtendedBinnedNLL(h, edges, cdf), ns=500, mx=peak, nb=h.sum(), lam=0.05)
    m.limits["ns"] = (0, None)
    m.limits["nb"] = (0, None)
    m.limits["mx"] = (lo + 2, hi - 2)
    m.migrad()
    m.hesse()
    return m


def signal_mc(path: Path, m0: float) -> tuple[float, float]:
    """Weighted selection efficiency over all generated events, and the relative resolution."""
    mc = read(path, ("genWeight",))
    with uproot.open(path) as f:
        sumw = float(np.sum(f["Runs"]["genEventSumw"].array(library="np")))
    w = ak.to_numpy(mc.genWeight).astype(np.float64)
    trig = ak.to_numpy(mc[TRIGGERS[0]]) | ak.to_numpy(mc[TRIGGERS[1]])
    _, os_, mass = dimuon(mc)
    sel = trig & os_ & (mass > WINDOW[0]) & (mass < WINDOW[1])
    return float(w[sel].sum() / sumw), fit_mc(mass[sel], w[sel], m0)


def analyze(inputs: Path) -> tuple[dict[str, float], list[tuple[str, int]]]:
    golden = json.loads((inputs / "Cert_Collisions2024X_golden.json").read_text())
    streams = [read(inputs / "DoubleMuon_Run2024X.root"), read(inputs / "SingleMuon_Run2024X.root")]
    ev = ak.concatenate(streams)
    key = np.stack([ak.to_numpy(ev.run).astype(np.int64), ak.to_numpy(ev.luminosityBlock).astype(np.int64),
                    ak.to_numpy(ev.event).astype(np.int64)], 1)
    _, first = np.unique(key, axis=0, return_index=True)
    ev = ev[np.sort(first)]
    cert = certified_mask(ev, golden)
    trig = cert & (ak.to_numpy(ev[TRIGGERS[0]]) | ak.to_numpy(ev[TRIGGERS[1]]))
    two, os_, mass = dimuon(ev)
    two, os_ = trig & two, trig & os_
    win = os_ & (mass > WINDOW[0]) & (mass < WINDOW[1])
    cutflow = [("all", len(ev)), ("certified", int(cert.sum())), ("triggered", int(trig.sum())),
               ("two_muons", int(two.sum())), ("opposite_sign", int(os_.sum())),
               ("mass_window", int(win.sum()))]

    grid = {m: signal_mc(inputs / f"XToMuMu_M{m}_NLO_skim.root", m) for m in MC_MASSES}
    masses = np.array(MC_MASSES, float)
    effs = np.array([grid[m][0] for m in MC_MASSES])
    rels = np.array([grid[m][1] for m in MC_MASSES])
    fit = fit_data(mass[win], float(np.interp(50.0, masses, rels)))
    for _ in range(3):  # the width follows the fitted mass
        fit = fit_data(mass[win], float(np.interp(fit.values["mx"], masses, rels)))
    mx = float(fit.values["mx"])
    eff, rel = float(np.interp(mx, masses, effs)), float(np.interp(mx, masses, rels))
    lumi = luminosity_pb(inputs / "lumi_byls.csv", golden)
    ns, ens = float(fit.values["ns"]), float(fit.errors["ns"])
    xs = ns / (eff * lumi)
    result = {"mass_GeV": float(fit.values["mx"]), "mass_stat_GeV": float(fit.errors["mx"]),
              "resolution_rel": rel, "signal_yield": ns, "signal_yield_stat": ens,
              "efficiency": eff, "efficiency_grid": {str(m): grid[m][0] for m in MC_MASSES}, "luminosity_pb": lumi, "xsec_br_pb": xs,
              "xsec_br_stat_pb": xs * ens / ns}
    return result, cutflow


def main() -> None:
    inputs, out = Path(sys.argv[1]), Path(sys.argv[2])
    result, cutflow = analyze(inputs)
    with (out / "cutflow.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["step", "events"])
        w.writerows(cutflow)
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
