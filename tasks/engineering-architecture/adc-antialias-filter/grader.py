"""Grader for adc-antialias-filter.

The agent's `.subckt AAF` is parsed, re-emitted canonically (only R, C and AX2172 instances
survive) and simulated in ngspice in the test bench the instruction describes. The filter is
judged on that simulation against filter_spec.json; the BOM against the netlist and the
inventory; the report against the simulation and the BOM.
"""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
from pathlib import Path

from lastexam.grading import (
    GradeContext,
    Outcome,
    Rubric,
    all_of,
    get,
    load_csv,
    load_json,
    near,
    read_text,
    within,
)

PORTS = ["in", "out", "vcc", "vee"]
CRUX_CORNER_PCT = 10.0
CRUX_ATTEN_2FC_DB = 18.0
OPAMP = "ax2172"
NUMBER = re.compile(r"^([+]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)([a-z]*)$")
SCALE = {"t": 1e12, "g": 1e9, "k": 1e3, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15}
NODE = re.compile(r"^[a-z0-9_#.:+\-\[\]]+$")


def spice_value(token: str) -> float | None:
    """SPICE semantics: number, optional scale factor (meg before m), trailing unit letters ignored."""
    m = NUMBER.match(token)
    if not m:
        return None
    base, tail = float(m.group(1)), m.group(2)
    if tail.startswith("meg"):
        return base * 1e6
    if tail.startswith("mil"):
        return base * 25.4e-6
    if tail and tail[0] in SCALE:
        return base * SCALE[tail[0]]
    return base


def logical_lines(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("*"):
            continue
        line = re.split(r";|\s\$|//", line, maxsplit=1)[0].strip()
        if not line:
            continue
        if line.startswith("+") and out:
            out[-1] += " " + line[1:].strip()
        else:
            out.append(line)
    return [line.lower() for line in out]


def parse_aaf(text: str | None) -> tuple[list[tuple] | None, Outcome, Outcome]:
    """(elements, outcome of finding the subcircuit, outcome of its contents). An element is
    (kind, name, nodes, value-or-model)."""
    if text is None:
        none = Outcome(False, "filter.cir is missing or unreadable")
        return None, none, Outcome(False, "no subcircuit to check")
    lines = logical_lines(text)
    starts = [i for i, line in enumerate(lines) if line.split()[:2] == [".subckt", "aaf"]]
    if len(starts) != 1:
        msg = f"found {len(starts)} '.subckt AAF' definitions"
        return None, Outcome(False, msg, expected=".subckt AAF in out vcc vee"), Outcome(False, "no subcircuit to check")
    head = lines[starts[0]].split()
    if head[2:] != PORTS:
        return None, Outcome(False, "wrong port list", expected=PORTS, seen=head[2:]), Outcome(False, "no subcircuit to check")
    body, closed = [], False
    for line in lines[starts[0] + 1:]:
        if line.split()[0] == ".ends":
            closed = True
            break
        body.append(line)
    if not closed:
        return None, Outcome(False, "no .ends after .subckt AAF"), Outcome(False, "no subcircuit to check")
    found = Outcome(True, f"AAF with ports {PORTS} and {len(body)} lines")
    elements, problems, names = [], [], set()
    for line in body:
        tok = line.split()
        kind, name = tok[0][0], tok[0]
        if not re.match(r"^[a-z][a-z0-9_]*$", name):
            problems.append(f"'{line}': unusable instance name")
            continue
        if name in names:
            problems.append(f"duplicate instance {name}")
        names.add(name)
        if kind in "rc":
            if len(tok) != 4:
                problems.append(f"'{line}': expected NAME N1 N2 VALUE")
                continue
            value = spice_value(tok[3])
            if value is None or value <= 0:
                problems.append(f"'{line}': value {tok[3]!r} is not a plain positive number")
                continue
            nodes = tok[1:3]
            elements.append((kind, name, nodes, value))
        elif kind == "x":
            if len(tok) != 7 or tok[6] != OPAMP:
                problems.append(f"'{line}': expected X NAME inp inn vcc vee out AX2172")
                continue
            nodes = tok[1:6]
            elements.append((kind, name, nodes, OPAMP))
        else:
            problems.append(f"'{line}': only R, C and AX2172 instances are allowed")
            continue
        bad = [n for n in nodes if not NODE.match(n)]
        if bad:
            problems.append(f"'{line}': unusable node names {bad}")
    if problems:
        return None, found, Outcome(False, f"{len(problems)} disallowed lines", seen=problems[:5])
    if not elements:
        return None, found, Outcome(False, "AAF is empty")
    return elements, found, Outcome(True, f"{len(elements)} elements: R, C and AX2172 only")


# ngspice measures the response itself (`meas`, `print`), so the figures do not come from the
# oracle's own Python post-processing: a mistake there cannot pass both.
MEASURES = ["offset_v", "g0", "ph0", "f3db", "a2fc", "alias", "peak"]
RESULT = re.compile(r"^(\w+)\s*=\s*([-+0-9.eE]+)")


def testbench(elements: list[tuple], spec: dict, lib: Path, sweep: dict) -> str:
    body = []
    for kind, name, nodes, value in elements:
        if kind == "x":
            body.append(f"{name} {' '.join(nodes)} {OPAMP}")
        else:
            body.append(f"{name} {nodes[0]} {nodes[1]} {value:.12g}")
    return "\n".join([
        "* grader test bench for AAF",
        f".include {lib}",
        ".subckt AAF in out vcc vee", *body, ".ends AAF",
        "Vsrc src 0 DC 0 AC 1",
        f"Rsrc src in {spec['source_resistance_ohm']}",
        f"Vcc vcc 0 DC {spec['supply_v'][0]}",
        f"Vee vee 0 DC {spec['supply_v'][1]}",
        "XAAF in out vcc vee AAF",
        f"Rload out 0 {spec['load_resistance_ohm']}",
        ".control", "set numdgt=12", "op", "let offset_v = v(out)", "print offset_v",
        f"ac dec {sweep['points_per_decade']} {sweep['start_hz']} {sweep['stop_hz']}",
        "let g0 = vdb(out)[0]", "let ph0 = 180 / pi * cph(v(out))[0]", "let corner = g0 - 3",
        "meas ac f3db when vdb(out)=$&corner fall=1",
        f"meas ac a2fc find vdb(out) at={2 * spec['corner_frequency_hz']}",
        f"meas ac alias max vdb(out) from={spec['alias_band_start_hz']} to={spec['alias_band_stop_hz']}",
        "meas ac peak max vdb(out)",
        *(f"print {m}" for m in MEASURES[1:]), "quit", ".endc", ".end",
    ]) + "\n"


def simulate(elements, spec, ctx: GradeContext, sweep: dict) -> tuple[dict | None, Outcome]:
    if elements is None:
        return None, Outcome(False, "no valid AAF subcircuit to simulate")
    net = ctx.scratch / "tb.cir"
    net.write_text(testbench(elements, spec, ctx.inputs / "AX2172.lib", sweep))
    try:
        proc = subprocess.run(["ngspice", "-b", str(net)], capture_output=True, text=True, timeout=120,
                              cwd=ctx.scratch)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, Outcome(False, f"ngspice did not run: {e}")
    got: dict[str, float] = {}
    for line in proc.stdout.splitlines():
        m = RESULT.match(line.strip())
        if m and m.group(1) in MEASURES and m.group(1) not in got:
            got[m.group(1)] = float(m.group(2))
    if any(k not in got or not math.isfinite(got[k]) for k in ("offset_v", "g0", "ph0", "peak")):
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-6:]
        return None, Outcome(False, f"ngspice produced no results (exit {proc.returncode})", seen=tail)
    g0 = got["g0"]
    return {
        "f_3db_hz": got.get("f3db"),  # None: the response never falls 3 dB below its DC gain
        "dc_gain_db": g0,
        "dc_phase_deg": got["ph0"],
        "passband_peaking_db": got["peak"] - g0,
        "attenuation_at_2fc_db": g0 - got["a2fc"] if "a2fc" in got else None,
        "min_alias_band_attenuation_db": g0 - got["alias"] if "alias" in got else None,
        "output_offset_mv": got["offset_v"] * 1e3,
    }, Outcome(True, "ngspice: operating point and AC measurements")


UNIT_SCALE = {"ohm": 1.0, "pF": 1e-12}


def load_inventory(path: Path) -> dict[str, dict]:
    """The trusted inventory by item code, each with its value in SI units as "v"."""
    with open(path, newline="") as f:
        return {row["item_code"]: {**row, "v": float(row["value"]) * UNIT_SCALE[row["unit"]]}
                for row in csv.DictReader(f)}


def same_value(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(abs(a), abs(b))


def allowed(row: dict, kind: str) -> bool:
    if kind == "r":
        return row["category"] == "resistor" and row["tolerance_pct"] == "1"
    return row["category"] == "capacitor" and row["dielectric"] == "C0G"


def passives_ok(elements, inv: dict) -> Outcome:
    if elements is None:
        return Outcome(False, "no valid AAF subcircuit")
    bad = []
    for kind, name, _, value in elements:
        if kind == "x":
            continue
        if not any(allowed(row, kind) and same_value(row["v"], value) for row in inv.values()):
            bad.append(f"{name.upper()}={value:.6g}")
    msg = "all values are stocked 1% thin-film resistors / C0G capacitors" if not bad else f"{len(bad)} parts not available under the policy"
    return Outcome(not bad, msg, expected="inventory values, 1% resistors, C0G capacitors", seen=bad[:8] or None)


def bom_checks(rows, elements, inv: dict, build_qty: int) -> tuple[Outcome, Outcome, Outcome, float | None]:
    """(refdes coverage, items match values and policy, stock sufficient, priced cost)."""
    if rows is None or elements is None:
        why = "bom.csv unusable" if rows is None else "no valid AAF subcircuit"
        return (Outcome(False, why),) * 3 + (None,)
    netlist = {name.upper(): (kind, value) for kind, name, _, value in elements if kind != "x"}
    seen_refs, coverage_problems, match_problems, per_item, cost = [], [], [], {}, 0.0
    for row in rows:
        refs = (row.get("refdes") or "").upper().split()
        seen_refs += refs
        qty = row.get("quantity")
        if not (qty or "").isdigit() or int(qty) != len(refs):
            coverage_problems.append(f"{row.get('item_code')}: quantity {qty!r} for {len(refs)} refdes")
        code = row.get("item_code") or ""
        item = inv.get(code)
        if item is None:
            match_problems.append(f"{code!r} is not an inventory item")
            continue
        per_item[code] = per_item.get(code, 0) + len(refs)
        cost += len(refs) * float(item["unit_price_usd"])
        for ref in refs:
            if ref not in netlist:
                continue
            kind, value = netlist[ref]
            if not same_value(item["v"], value):
                match_problems.append(f"{ref}: {code} is {item['value']} {item['unit']}, netlist {value:.6g}")
            elif not allowed(item, kind):
                match_problems.append(f"{ref}: {code} violates the part policy ({item['description']})")
    dupes = sorted({r for r in seen_refs if seen_refs.count(r) > 1})
    missing = sorted(set(netlist) - set(seen_refs))
    extra = sorted(set(seen_refs) - set(netlist))
    if dupes or missing or extra:
        coverage_problems.append(f"missing {missing}, not in AAF {extra}, repeated {dupes}")
    coverage = Outcome(not coverage_problems, "every R and C listed once with matching quantities" if not coverage_problems
                       else "; ".join(coverage_problems)[:500], expected=sorted(netlist), seen=sorted(set(seen_refs)))
    match = Outcome(not match_problems and bool(rows), "items match the netlist values and the policy" if not match_problems
                    else f"{len(match_problems)} mismatches", seen=match_problems[:6] or None)
    short = [f"{code}: {inv[code]['qty_on_hand']} on hand, need {build_qty * n}"
             for code, n in sorted(per_item.items()) if int(inv[code]["qty_on_hand"]) < build_qty * n]
    stock = Outcome(bool(per_item) and not short, f"stock covers {build_qty} boards" if not short else "short stock",
                    seen=short or None)
    return coverage, match, stock, round(cost, 6)


def grade(ctx: GradeContext) -> Rubric:
    r = Rubric()
    ref = ctx.reference_json("grading.json")
    tol = ref["consistency_tolerances"]
    spec = json.loads((ctx.inputs / "filter_spec.json").read_text())
    inv = load_inventory(ctx.inputs / "inventory.csv")

    text, _ = read_text(ctx.out("filter.cir"))
    elements, found, contents = parse_aaf(text)
    r.gate("filter.cir defines .subckt AAF in out vcc vee", found)
    r.gate("AAF holds only R, C and AX2172 instances with plain values", contents)
    sim, ran = simulate(elements, spec, ctx, ref["sweep"])
    r.gate("ngspice simulates AAF in the specified test bench", ran)
    s = sim or {}

    fc = spec["corner_frequency_hz"]
    band = fc * spec["corner_tolerance_pct"] / 100
    # The crux, at a coarse threshold: the re-simulated circuit is roughly the filter asked for.
    # A 4th-order Butterworth falls 24.1 dB at 2 fc, a 3rd-order one 18.1 dB; a 2nd-order
    # response falls 12.3 dB (Butterworth) and reaches 18 dB only with 6 dB of peaking. The
    # corner may be 10 % off. A low-order or mistuned design earns nothing, whatever its report.
    r.gate("re-simulated AAF is roughly the filter asked for (corner near fc, at least 3rd-order roll-off)", all_of([
               ("corner", within(get(s, "f_3db_hz"), fc * (1 - CRUX_CORNER_PCT / 100), fc * (1 + CRUX_CORNER_PCT / 100))),
               ("attenuation at 2 fc", within(get(s, "attenuation_at_2fc_db"), CRUX_ATTEN_2FC_DB, 1e9)),
           ]))
    # The spec's own limits: the filter either meets its mask or it does not.
    r.check("-3 dB corner within the specified tolerance", 3,
            within(get(s, "f_3db_hz"), fc - band, fc + band))
    gain = within(get(s, "dc_gain_db"), spec["dc_gain_db"] - spec["dc_gain_tolerance_db"],
                  spec["dc_gain_db"] + spec["dc_gain_tolerance_db"])
    phase = get(s, "dc_phase_deg")
    if gain.passed and abs(phase) >= 90:
        gain = Outcome(False, f"gain magnitude in range but the output is inverted (phase {phase:.1f} deg at 10 Hz)",
                       expected="non-inverting", seen=phase)
    r.check("DC gain within tolerance and non-inverting", 2, gain)
    r.check("passband peaking within the limit", 2,
            within(get(s, "passband_peaking_db"), -1e9, spec["max_passband_peaking_db"]))
    r.check("attenuation at twice the corner meets the mask", 2,
            within(get(s, "attenuation_at_2fc_db"), spec["min_attenuation_at_2fc_db"], 1e9))
    r.check("alias-band attenuation up to 10 MHz meets the mask", 2,
            within(get(s, "min_alias_band_attenuation_db"), spec["min_alias_band_attenuation_db"], 1e9))
    lim = spec["max_output_offset_mv"]
    r.check("DC output offset within the limit", 1, within(get(s, "output_offset_mv"), -lim, lim))
    n_ops = sum(1 for e in elements or [] if e[0] == "x") if elements is not None else None
    r.check("at most two AX2172 sections", 1,
            within(n_ops, 1, 2) if n_ops is not None else Outcome(False, "no valid AAF subcircuit"))
    r.check("every R and C is a stocked 1% thin-film / C0G value", 2, passives_ok(elements, inv))

    rows, bom_ok = load_csv(ctx.out("bom.csv"), required_columns=["item_code", "value", "unit", "quantity", "refdes"])
    coverage, match, stock, cost = bom_checks(rows if bom_ok.passed else None, elements, inv,
                                              spec["build_quantity_boards"])
    if not bom_ok.passed:
        coverage = bom_ok
    r.check("BOM lists every R and C of AAF exactly once", 1, coverage)
    r.check("BOM items match the netlist values and the part policy", 2, match)
    r.check("stock covers the build quantity for every BOM line", 1, stock)

    report, rep_ok = load_json(ctx.out("design_report.json"))

    def agree(key: str, **tolerance) -> Outcome:
        if not rep_ok.passed:
            return rep_ok
        if sim is None or sim.get(key) is None:
            return Outcome(False, f"no simulated {key} to compare with")
        out = near(get(report, key), sim[key], **tolerance)
        return Outcome(out.passed, f"{key}: simulated {sim[key]:.6g}, reported {out.seen}, {out.message}",
                       out.expected, out.seen)

    # Tolerances: the agent's sweep may be coarser (>= 100 points/decade) and interpolated
    # differently; these bounds cover that and still catch a report from another circuit or
    # test bench (a missing source resistance moves the corner by several percent).
    r.check("report corner frequency agrees with the re-simulation", 1, agree("f_3db_hz", rel=tol["f_3db_rel"]))
    r.check("report gain, peaking and 2fc attenuation agree with the re-simulation", 1, all_of([
        ("dc_gain_db", agree("dc_gain_db", abs=tol["dc_gain_db"])),
        ("passband_peaking_db", agree("passband_peaking_db", abs=tol["peaking_db"])),
        ("attenuation_at_2fc_db", agree("attenuation_at_2fc_db", abs=tol["attenuation_2fc_db"])),
    ]))
    # 1 dB on the alias band: at 100 points/decade a grid point can sit 1/100 decade past the
    # band edge, where an 80 dB/decade slope adds 0.8 dB. The offset is a DC solution of the same
    # linear model: 0.05 mV covers rounding only.
    opamps = (Outcome(False, "report unusable") if not rep_ok.passed else
              Outcome(get(report, "opamp_sections") == n_ops and n_ops is not None,
                      "opamp_sections", expected=n_ops, seen=get(report, "opamp_sections")))
    r.check("report alias attenuation, offset and op-amp count agree", 1, all_of([
        ("min_alias_band_attenuation_db", agree("min_alias_band_attenuation_db", abs=tol["alias_attenuation_db"])),
        ("output_offset_mv", agree("output_offset_mv", abs=tol["offset_mv"])),
        ("opamp_sections", opamps),
    ]))
    if not rep_ok.passed:
        priced = rep_ok
    elif cost is None:
        priced = Outcome(False, "no usable BOM to price")
    else:
        # Half a tenth of a cent: unit prices have three decimals.
        priced = near(get(report, "bom_cost_usd"), cost, abs=tol["bom_cost_usd"])
    r.check("report BOM cost equals the BOM priced from the inventory", 1, priced)
    return r
