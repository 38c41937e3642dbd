"""Grader for m-current-neuron-fi.

The reference is an independent NumPy RK4 integration (dt = 0.02 ms) of the exported cell;
the Brian2 oracle (RK4, checked at dt 0.01 and 0.02 ms) agrees with it to 0.1 % on the
passive properties and exactly on spike counts and rheobase; so does Brian2's rk2 at 0.02 ms.
First-order schemes at the allowed steps do not (exponential Euler at 0.02 ms: 29 spikes
instead of 34 at 400 pA, adaptation ratio 15 % off; at 0.01 ms: 31, 8 % off), which is why the
instruction asks for a method of at least second order.

Tolerances: spike counts +-2 per 300 ms step (integrators and step sizes shift spike times
near rheobase by a spike or two; a missing temperature correction or a conductance-density
slip moves them by far more); rheobase +-10 pA (two steps of the 5 pA grid); resting
potential +-0.5 mV; input resistance 1 % and membrane time constant 2 % (the passive-theory
values 1/g_leak and C/g_leak, which ignore the M-current open at rest, are 2.3 % and 3.8 % off);
adaptation ratio 5 % (a ratio of two ISIs, each known to about 1 %).
"""

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
    rows_by,
)

COUNT_ABS = 2
CRUX_SHARE = 0.8


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("expected.json")
    counts = {int(k): v for k, v in ref["fi_spike_counts"].items()}
    rows, ok_fi = load_csv(ctx.out("fI.csv"), required_columns=["current_pA", "spike_count", "rate_hz"])
    props, ok_p = load_json(ctx.out("cell_props.json"))
    r.gate("fI.csv has the required columns and cell_props.json is a JSON object",
           all_of([("fI.csv", ok_fi), ("cell_props.json", ok_p)]))
    fi = rows_by(rows, lambda row: int(as_number(row["current_pA"])))
    close = sum(1 for c, n in counts.items()
                if c in fi and near(fi[c].get("spike_count"), n, abs=COUNT_ABS).passed)
    r.gate(f"the simulated f-I curve matches the cell at >= {CRUX_SHARE:.0%} of the currents",
           Outcome(close >= CRUX_SHARE * len(counts), f"{close} of {len(counts)} currents within +-{COUNT_ABS} spikes",
                   expected=len(counts), seen=close))

    r.check("one f-I row per current of the protocol", 1, fi.coverage(counts))
    exp_fi = {c: {"spike_count": n, "rate_hz": n / 0.3} for c, n in counts.items()}
    r.check("spike counts during the step (+-2)", 3, match_rows(fi, exp_fi, ["spike_count"], abs=COUNT_ABS))
    r.check("rates are counts over the 300 ms step (+-6.7 Hz)", 1,
            match_rows(fi, exp_fi, ["rate_hz"], abs=COUNT_ABS / 0.3))
    r.check("rheobase on the 5 pA grid (+-10 pA)", 2, near(get(props, "rheobase_pA", None), ref["rheobase_pA"], abs=10))
    r.check("resting potential (+-0.5 mV)", 1, near(get(props, "v_rest_mV", None), ref["v_rest_mV"], abs=0.5))
    r.check("input resistance from the -30 pA step (1 %)", 2,
            near(get(props, "input_resistance_MOhm", None), ref["input_resistance_MOhm"], rel=0.01))
    r.check("membrane time constant, 63.2 % of the deflection (2 %)", 1,
            near(get(props, "tau_m_ms", None), ref["tau_m_ms"], rel=0.02))
    r.check("adaptation ratio at 300 pA (5 %)", 1,
            near(get(props, "adaptation_ratio", None), ref["adaptation_ratio"], rel=0.05))
    return r
