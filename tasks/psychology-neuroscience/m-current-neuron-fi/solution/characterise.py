"""Oracle: the exported NEURON cell rebuilt in Brian2 (numpy target) and characterised."""

import csv
import json
import re
import sys
from pathlib import Path

import numpy as np
from brian2 import (
    NeuronGroup,
    SpikeMonitor,
    StateMonitor,
    TimedArray,
    cm,
    defaultclock,
    ms,
    mV,
    pA,
    prefs,
    run,
    siemens,
    ufarad,
    um,
)

prefs.codegen.target = "numpy"
STEP_ON, STEP_OFF, END = 100, 400, 400  # ms
FI = list(range(0, 401, 25))
GRID = list(range(0, 401, 5))
HYPER, ADAPT = -30, 300  # pA


def main(inputs: Path, output: Path) -> None:
    p = json.loads((inputs / "cell_model.json").read_text())
    area = np.pi * p["geometry"]["diam"] * p["geometry"]["L"] * um**2
    phi = p["q10"] ** ((p["celsius"] - p["rates_fitted_at_celsius"]) / 10)
    currents = sorted(set(FI) | set(GRID) | {HYPER, ADAPT})
    k = {name: re.sub(r"\bv\b", "vm", expr) for name, expr in p["kinetics"].items()}  # v in mV there
    eqs = f"""
    dv/dt = (I_inj - gna*m**3*h*(v-ena) - gk*n**4*(v-ek) - gm*p*(v-ek) - gl*(v-el)) / C : volt
    I_inj = I_step * stim(t) : amp
    I_step : amp (constant)
    dm/dt = phi*(am*(1-m) - bm*m) : 1
    dh/dt = phi*(ah*(1-h) - bh*h) : 1
    dn/dt = phi*(an*(1-n) - bn*n) : 1
    dp/dt = phi*(pinf - p)/taup : 1
    am = ({k["alpha_m"]})/ms : Hz
    bm = ({k["beta_m"]})/ms : Hz
    ah = ({k["alpha_h"]})/ms : Hz
    bh = ({k["beta_h"]})/ms : Hz
    an = ({k["alpha_n"]})/ms : Hz
    bn = ({k["beta_n"]})/ms : Hz
    pinf = {k["p_inf"]} : 1
    taup = ({k["tau_p"]})*ms : second
    vm = v/mV : 1
    """
    consts = {
        "C": p["cm"] * ufarad / cm**2 * area, "gna": p["na"]["gnabar"] * siemens / cm**2 * area,
        "gk": p["kdr"]["gkbar"] * siemens / cm**2 * area, "gm": p["im"]["gmbar"] * siemens / cm**2 * area,
        "gl": p["leak"]["g_pas"] * siemens / cm**2 * area, "ena": p["na"]["ena"] * mV, "ek": p["kdr"]["ek"] * mV,
        "el": p["leak"]["e_pas"] * mV, "vtraub": p["vtraub"], "tau_max": p["im"]["tau_max"], "phi": phi,
        "stim": TimedArray(np.r_[np.zeros(STEP_ON), np.ones(STEP_OFF - STEP_ON), 0.0], dt=1 * ms),
    }
    defaultclock.dt = 0.02 * ms
    g = NeuronGroup(len(currents), eqs, method="rk4", namespace=consts, threshold="v > 0*mV",
                    refractory="v > 0*mV")
    g.v, g.m, g.h, g.n, g.p = p["leak"]["e_pas"] * mV, 0, 1, 0, 0
    g.I_step = np.array(currents) * pA
    col = {c: i for i, c in enumerate(currents)}
    sm = SpikeMonitor(g)
    vm = StateMonitor(g, "v", record=[col[HYPER]])
    run(END * ms)

    trains = sm.spike_trains()
    in_step = {c: [float(t / ms) for t in trains[col[c]] if STEP_ON <= t / ms < STEP_OFF] for c in currents}
    with open(output / "fI.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["current_pA", "spike_count", "rate_hz"])
        for c in FI:
            w.writerow([c, len(in_step[c]), len(in_step[c]) / ((STEP_OFF - STEP_ON) / 1000)])
    t = vm.t / ms
    v = vm.v[0] / mV
    v_rest = float(np.interp(STEP_ON, t, v))
    defl = float(np.interp(STEP_OFF, t, v)) - v_rest
    seg = (t >= STEP_ON) & (t <= STEP_OFF)
    ts, vs = t[seg], v[seg] - v_rest
    i = int(np.argmax(vs <= 0.632 * defl))
    tau = ts[i - 1] + (0.632 * defl - vs[i - 1]) / (vs[i] - vs[i - 1]) * (ts[i] - ts[i - 1]) - STEP_ON
    isi = np.diff(in_step[ADAPT])
    props = {"rheobase_pA": next(c for c in GRID if in_step[c]), "v_rest_mV": v_rest,
             "input_resistance_MOhm": defl / HYPER * 1e3, "tau_m_ms": float(tau),
             "adaptation_ratio": float(isi[-1] / isi[0])}
    (output / "cell_props.json").write_text(json.dumps(props, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
