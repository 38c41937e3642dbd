"""Writes inputs/cell_model.json (a NEURON-style parameter export) and reference/expected.json.

The reference is an independent fixed-step RK4 integration in NumPy (dt = 0.02 ms) of the
point neuron the export describes, at the recording temperature, with the protocol of the
instruction. Values are rounded so that last-ulp differences of exp() cannot show.
"""

import argparse
import json
from pathlib import Path

import numpy as np

CANARY = "8afc525c-db25-4c92-99cc-43bcaaa79789"
MODEL = {
    "source": "lab NEURON model cortical_rs.hoc, single compartment, exported parameters",
    "units": {"conductance": "S/cm2", "capacitance": "uF/cm2", "voltage": "mV", "time": "ms",
              "length": "um", "rate": "1/ms"},
    "geometry": {"L": 60.0, "diam": 60.0, "nseg": 1, "note": "cylinder, side area pi*diam*L, no end caps"},
    "cm": 1.0,
    "leak": {"g_pas": 1.0e-4, "e_pas": -70.0},
    "na": {"gnabar": 0.05, "ena": 50.0},
    "kdr": {"gkbar": 0.005, "ek": -90.0},
    "im": {"gmbar": 7.0e-5, "ek": -90.0, "tau_max": 1000.0},
    "vtraub": -56.2,
    "kinetics": {
        "alpha_m": "-0.32*(v-vtraub-13)/(exp(-(v-vtraub-13)/4)-1)",
        "beta_m": "0.28*(v-vtraub-40)/(exp((v-vtraub-40)/5)-1)",
        "alpha_h": "0.128*exp(-(v-vtraub-17)/18)",
        "beta_h": "4/(1+exp(-(v-vtraub-40)/5))",
        "alpha_n": "-0.032*(v-vtraub-15)/(exp(-(v-vtraub-15)/5)-1)",
        "beta_n": "0.5*exp(-(v-vtraub-10)/40)",
        "p_inf": "1/(1+exp(-(v+35)/10))",
        "tau_p": "tau_max/(3.3*exp((v+35)/20)+exp(-(v+35)/20))",
    },
    "rates_fitted_at_celsius": 23.0,
    "q10": 3.0,
    "q10_applies_to": ["m", "h", "n", "p"],
    "celsius": 33.0,
}
DT = 0.02
T_ON, T_OFF, T_END = 100.0, 400.0, 400.0
FI_PA = list(range(0, 401, 25))
GRID_PA = list(range(0, 401, 5))
HYPER_PA = -30.0
ADAPT_PA = 300.0


def vtrap(x: np.ndarray, k: float) -> np.ndarray:
    """x / (exp(x/k) - 1), continuous at x = 0."""
    u = x / k
    small = np.abs(u) < 1e-7
    if not small.any():  # the usual case; the np.where below would give the same values, slower
        return x / np.expm1(u)
    return np.where(small, k * (1 - u / 2), x / np.expm1(np.where(small, 1.0, u)))


def derivs(y: np.ndarray, i_inj: np.ndarray, c: dict) -> np.ndarray:
    v, m, h, n, p = y
    x = v - c["vt"]
    am = 0.32 * vtrap(-(x - 13), 4)
    bm = 0.28 * vtrap(x - 40, 5)
    ah = 0.128 * np.exp(-(x - 17) / 18)
    bh = 4 / (1 + np.exp(-(x - 40) / 5))
    an = 0.032 * vtrap(-(x - 15), 5)
    bn = 0.5 * np.exp(-(x - 10) / 40)
    pinf = 1 / (1 + np.exp(-(v + 35) / 10))
    taup = c["tau_max"] / (3.3 * np.exp((v + 35) / 20) + np.exp(-(v + 35) / 20))
    phi = c["phi"]
    i_ion = (c["gna"] * m**3 * h * (v - c["ena"]) + c["gk"] * n**4 * (v - c["ek"])
             + c["gm"] * p * (v - c["ek"]) + c["gl"] * (v - c["el"]))  # nA with g in uS
    dv = (i_inj - i_ion) / c["cm"]  # nA / nF = mV/ms
    return np.array([dv, phi * (am * (1 - m) - bm * m), phi * (ah * (1 - h) - bh * h),
                     phi * (an * (1 - n) - bn * n), phi * (pinf - p) / taup])


def simulate(currents_pa: list[float]) -> tuple[np.ndarray, list[list[float]], np.ndarray]:
    mdl = MODEL
    area_cm2 = np.pi * mdl["geometry"]["diam"] * mdl["geometry"]["L"] * 1e-8
    c = {"cm": mdl["cm"] * area_cm2 * 1e3,  # uF/cm2 * cm2 = uF -> nF
         "gna": mdl["na"]["gnabar"] * area_cm2 * 1e6, "gk": mdl["kdr"]["gkbar"] * area_cm2 * 1e6,
         "gm": mdl["im"]["gmbar"] * area_cm2 * 1e6, "gl": mdl["leak"]["g_pas"] * area_cm2 * 1e6,  # S -> uS
         "ena": mdl["na"]["ena"], "ek": mdl["kdr"]["ek"], "el": mdl["leak"]["e_pas"], "vt": mdl["vtraub"],
         "tau_max": mdl["im"]["tau_max"],
         "phi": mdl["q10"] ** ((mdl["celsius"] - mdl["rates_fitted_at_celsius"]) / 10)}
    amps = np.array(currents_pa, dtype=float) * 1e-3  # nA
    v0 = np.full(len(amps), mdl["leak"]["e_pas"])
    y = np.array([v0, np.zeros_like(v0), np.ones_like(v0), np.zeros_like(v0), np.zeros_like(v0)])
    steps = int(round(T_END / DT))
    spikes: list[list[float]] = [[] for _ in amps]
    trace = np.empty((steps + 1, len(amps)))
    trace[0] = y[0]
    zero = np.zeros_like(amps)
    for k in range(steps):
        t = k * DT
        i0 = amps if T_ON <= t < T_OFF else zero
        i1 = amps if T_ON <= t + DT / 2 < T_OFF else zero
        i2 = amps if T_ON <= t + DT < T_OFF else zero
        k1 = derivs(y, i0, c)
        k2 = derivs(y + DT / 2 * k1, i1, c)
        k3 = derivs(y + DT / 2 * k2, i1, c)
        k4 = derivs(y + DT * k3, i2, c)
        new = y + DT / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        for j in np.nonzero((y[0] < 0) & (new[0] >= 0))[0]:
            spikes[j].append(t + DT * (0 - y[0][j]) / (new[0][j] - y[0][j]))
        y = new
        trace[k + 1] = y[0]
    return np.arange(steps + 1) * DT, spikes, trace


def measure() -> dict:
    currents = sorted(set(FI_PA) | set(GRID_PA) | {HYPER_PA, ADAPT_PA})
    t, spikes, trace = simulate(currents)
    col = {c: i for i, c in enumerate(currents)}
    in_step = {c: [s for s in spikes[col[c]] if T_ON <= s < T_OFF] for c in currents}
    fi = {str(c): len(in_step[c]) for c in FI_PA}
    rheo = next(c for c in GRID_PA if in_step[c])
    j = col[HYPER_PA]
    v_rest = float(trace[int(round(T_ON / DT)), j])
    v_ss = float(trace[int(round(T_OFF / DT)), j])
    defl = v_ss - v_rest
    seg = trace[int(round(T_ON / DT)):int(round(T_OFF / DT)) + 1, j] - v_rest
    k = int(np.argmax(seg <= 0.632 * defl))  # first sample past 63.2 % of the deflection
    frac = (0.632 * defl - seg[k - 1]) / (seg[k] - seg[k - 1])
    tau = (k - 1 + frac) * DT
    isi = np.diff(in_step[ADAPT_PA])
    return {"fi_spike_counts": fi, "rheobase_pA": rheo, "v_rest_mV": round(v_rest, 4),
            "input_resistance_MOhm": round(defl / HYPER_PA * 1e3, 4), "tau_m_ms": round(tau, 4),
            "adaptation_ratio": round(float(isi[-1] / isi[0]), 4), "spikes_at_adapt": len(in_step[ADAPT_PA])}


def main(out: Path) -> None:
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    (out / "inputs" / "cell_model.json").write_text(json.dumps(MODEL, indent=2) + "\n")
    ref = {"canary": CANARY, **measure()}
    (out / "reference" / "expected.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(Path(__file__).parent))
    main(Path(ap.parse_args().out))
