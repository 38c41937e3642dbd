"""Seeded generator of inputs/ and reference/ for adc-antialias-filter: python3 generate.py --out DIR.

inputs/filter_spec.json   the filter requirement (corner, mask, source and load, build quantity)
inputs/AX2172.lib         the op-amp's behavioural macromodel (one section of a dual)
inputs/inventory.csv      the stores' resistor and capacitor stock
reference/grading.json    the grader's test-bench and sweep settings
"""

import argparse
import json
import random
from pathlib import Path

SEED = 7321
CANARY = "583eaf98-55a7-47db-80de-084798575d6f"
E24 = [1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.8, 2.0, 2.2, 2.4, 2.7, 3.0,
       3.3, 3.6, 3.9, 4.3, 4.7, 5.1, 5.6, 6.2, 6.8, 7.5, 8.2, 9.1]
E12 = [1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2]
BUILD_QTY = 250


def fmt(x: float) -> str:
    """A value in base units with no float noise: 4700, 0.47, 1000000."""
    return f"{x:.6g}" if x < 1e6 else str(int(round(x)))


def stock(rng: random.Random) -> int:
    """Most lines are well stocked; about one in eight is short of a 250-board run."""
    if rng.random() < 0.12:
        return rng.choice([0, 0, 40, 120, 300, 450])
    return rng.choice([2000, 2500, 4000, 5000, 8000, 10000, 15000])


def inventory(rng: random.Random) -> list[dict]:
    rows = []
    decades = [10, 100, 1000, 10000, 100000]
    res = [round(m * d, 6) for d in decades for m in E24] + [1e6]
    for ohm in res:
        code = f"{int(round(ohm * 10)):08d}"
        rows.append(dict(item_code=f"RTF0603-{code}", category="resistor", value=fmt(ohm), unit="ohm",
                         tolerance_pct="1", dielectric="", package="0603",
                         description="thin-film resistor 1% 25ppm/K 0.1W",
                         qty_on_hand=stock(rng), unit_price_usd=f"{rng.choice([0.012, 0.014, 0.016]):.3f}"))
        rows.append(dict(item_code=f"RTK0603-{code}", category="resistor", value=fmt(ohm), unit="ohm",
                         tolerance_pct="5", dielectric="", package="0603",
                         description="thick-film resistor 5% 200ppm/K 0.1W",
                         qty_on_hand=stock(rng), unit_price_usd=f"{rng.choice([0.002, 0.003]):.3f}"))
    c0g_pf = [round(m * d, 6) for d in (10, 100, 1000) for m in E12] + [10000.0]
    for pf in c0g_pf:
        pkg = "0603" if pf <= 2200 else "0805"
        rows.append(dict(item_code=f"CC0G{pkg}-{int(round(pf * 10)):07d}", category="capacitor", value=fmt(pf),
                         unit="pF", tolerance_pct="5" if pf >= 100 else "2", dielectric="C0G", package=pkg,
                         description="MLCC C0G/NP0 50V", qty_on_hand=stock(rng),
                         unit_price_usd=f"{0.010 + 0.004 * (pf >= 1000) + 0.012 * (pf >= 4700) + 0.003 * rng.random():.3f}"))
    x7r_pf = [round(m * d, 6) for d in (1000, 10000, 100000) for m in E12] + [1000000.0]
    for pf in x7r_pf:
        rows.append(dict(item_code=f"CX7R0603-{int(round(pf * 10)):08d}", category="capacitor", value=fmt(pf),
                         unit="pF", tolerance_pct="10", dielectric="X7R", package="0603",
                         description="MLCC X7R 50V", qty_on_hand=stock(rng),
                         unit_price_usd=f"{0.004 + 0.002 * rng.random():.3f}"))
    rng.shuffle(rows)
    rows.sort(key=lambda r: (r["category"], r["dielectric"], float(r["value"]), r["item_code"]))
    return rows


def opamp_model(gbw: float, p2: float, rout: float, vos: float, ib: float, ios: float) -> str:
    gm = 1e-3
    a0_db = 100.0
    r1 = 10 ** (a0_db / 20) / gm
    c1 = gm / (2 * 3.141592653589793 * gbw)
    c2 = 1 / (2 * 3.141592653589793 * 1e3 * p2)
    return f"""* AX2172 -- dual low-noise precision op-amp: behavioural macromodel of ONE section.
* Linear small-signal + DC model for design verification (AC, DC operating point).
* Typical values, Vs = +/-5 V, 25 C:
*   open-loop gain              {a0_db:.0f} dB
*   gain-bandwidth product      {gbw / 1e6:.2f} MHz (dominant pole)
*   non-dominant pole           {p2 / 1e6:.1f} MHz
*   open-loop output resistance {rout:.0f} ohm
*   input offset voltage        {vos * 1e3:.2f} mV
*   input bias current          {ib * 1e9:.0f} nA (flowing into each input), offset current {ios * 1e9:.0f} nA
*   differential input resistance 2 Mohm
* Pins: non-inverting input, inverting input, positive supply, negative supply, output
.subckt AX2172 inp inn vcc vee out
Rdiff inp inn 2meg
Ibp inp 0 DC {(ib + ios / 2) * 1e9:.1f}n
Ibn inn 0 DC {(ib - ios / 2) * 1e9:.1f}n
Vos inp inx DC {vos * 1e3:.3f}m
Gin 0 ng inx inn {gm:g}
Rg ng 0 {r1:.6g}
Cg ng 0 {c1 * 1e12:.4f}p
Ebuf nb 0 ng 0 1
Rp2 nb np2 1k
Cp2 np2 0 {c2 * 1e12:.4f}p
Eout no 0 np2 0 1
Rout no out {rout:.0f}
Rsup vcc vee 4.3k
.ends AX2172
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)

    fc = rng.choice([12000, 13500, 15000, 16000, 18000])
    fs = rng.choice([144000, 150000, 160000]) if fc <= 15000 else rng.choice([176400, 192000])
    rs = rng.choice([680, 820, 1000, 1200, 1500])
    gbw = round(rng.uniform(1.05, 1.35), 2) * 1e6
    rout = float(rng.choice([80, 90, 100, 110]))
    vos = round(rng.uniform(0.30, 0.55), 2) * 1e-3
    ib = rng.choice([120, 140, 160, 180]) * 1e-9
    ios = rng.choice([10, 15, 20]) * 1e-9

    spec = {
        "project": "VM-8 vibration monitor, channel anti-aliasing filter",
        "response": "4th-order Butterworth low-pass, non-inverting, unity gain",
        "corner_frequency_hz": fc,
        "corner_tolerance_pct": 2.0,
        "dc_gain_db": 0.0,
        "dc_gain_tolerance_db": 0.1,
        "max_passband_peaking_db": 0.2,
        "min_attenuation_at_2fc_db": 23.0,
        "adc_sample_rate_hz": fs,
        "alias_band_start_hz": fs - fc,
        "alias_band_stop_hz": 10000000,
        "min_alias_band_attenuation_db": 70.0,
        "max_output_offset_mv": 4.0,
        "source_resistance_ohm": rs,
        "load_resistance_ohm": 10000,
        "supply_v": [5.0, -5.0],
        "opamp": "AX2172 (dual): at most 2 sections",
        "build_quantity_boards": BUILD_QTY,
        "resistor_policy": "1% thin film only",
        "capacitor_policy": "C0G/NP0 only",
    }
    (out / "inputs" / "filter_spec.json").write_text(json.dumps(spec, indent=2) + "\n")
    (out / "inputs" / "AX2172.lib").write_text(opamp_model(gbw, 15e6, rout, vos, ib, ios))
    rows = inventory(rng)
    cols = ["item_code", "category", "value", "unit", "tolerance_pct", "dielectric", "package",
            "description", "qty_on_hand", "unit_price_usd"]
    lines = [",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in rows]
    (out / "inputs" / "inventory.csv").write_text("\n".join(lines) + "\n")

    grading = {
        "canary": CANARY,
        "testbench": {"source_ac_v": 1.0, "supplies_v": [5.0, -5.0]},
        "sweep": {"points_per_decade": 500, "start_hz": 10, "stop_hz": 10000000},
        "consistency_tolerances": {"f_3db_rel": 0.005, "dc_gain_db": 0.02, "peaking_db": 0.05,
                                   "attenuation_2fc_db": 0.1, "alias_attenuation_db": 1.0,
                                   "offset_mv": 0.05, "bom_cost_usd": 0.0015},
    }
    (out / "reference" / "grading.json").write_text(json.dumps(grading, indent=2) + "\n")


if __name__ == "__main__":
    main()
