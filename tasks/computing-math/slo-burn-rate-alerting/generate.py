"""Seeded generator of inputs/ and reference/ for slo-burn-rate-alerting: python3 generate.py --out DIR.

The reference is a set of promtool unit-test files (one per graded check) over synthetic series
of the checkout service, with the expected SLI values and alert states computed here from the
counters themselves (Prometheus 2.42 semantics: range selectors closed at both ends, so a
window fully covered by samples gives the plain increase; every counter starts at 0 at t=0, so
a window reaching before the data is the increase since the start).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from scenarios import (
    ALERT_ROWS,
    BUDGET,
    SCENARIOS,
    WINDOWS,
    Scenario,
    build_series,
    sample_exposition,
)

CANARY = "94401159-4c4e-487a-bb64-cf6dce94125c"
RULES_PLACEHOLDER = "__RULES__"
VALUE_REL_TOL = 1e-6
MARGIN = 0.05  # every graded alert decision is at least 5 % away from its threshold
HERE = Path(__file__).parent


def fmt(x: float) -> str:
    return repr(float(x))


def window_ratio(scn: Scenario, slo: str, t: int, w: int) -> float | None:
    """Bad/valid events over [t - w, t]; None when Prometheus has fewer than 2 samples."""
    step = scn.step
    if w < step:
        return None
    bad, valid = scn.sli_counters[slo]
    hi = t // step
    lo = max(0, (t - w) // step)
    if hi - lo < 1:
        return None
    b = sum(bad[lo + 1: hi + 1])
    v = sum(valid[lo + 1: hi + 1])
    return b / v


def row_state(scn: Scenario, slo: str, t: int, long_w: int, short_w: int, burn: float) -> bool:
    """One row of the policy: both windows above burn x budget, asserted far from the edge."""
    threshold = burn * BUDGET[slo]
    levels = []
    for w in (long_w, short_w):
        r = window_ratio(scn, slo, t, w)
        levels.append(0.0 if r is None else r / threshold)
    level = min(levels)
    assert abs(level - 1.0) >= MARGIN, (scn.name, slo, t, long_w, short_w, level)
    return level > 1.0


def alert_set(scn: Scenario, t: int) -> list[tuple[str, str]]:
    """The alerts firing at t, the same whether the alerting rules see the recording rules of
    this evaluation or of the one before (promtool evaluates groups in no fixed order)."""
    assert scn.step == 1, scn.name
    sets = []
    for at in (t, t - 1):
        firing = set()
        for slo in ("availability", "latency"):
            if slo == "latency" and not scn.histograms:
                continue
            for severity, long_w, short_w, burn in ALERT_ROWS:
                if row_state(scn, slo, at, long_w, short_w, burn):
                    firing.add((slo, severity))
        sets.append(sorted(firing))
    assert sets[0] == sets[1], (scn.name, t, sets)
    return sets[0]


def group_yaml(scn: Scenario, exprs: list[str]) -> str:
    lines = [f"  - name: {scn.name}", f"    interval: {scn.step}m", "    input_series:"]
    for labels, values in build_series(scn):
        lines.append(f"      - series: '{labels}'")
        lines.append(f"        values: '{values}'")
    lines.append("    promql_expr_test:")
    lines.extend(exprs)
    return "\n".join(lines)


def value_exprs(scn: Scenario, slo: str, t: int) -> list[str]:
    out = []
    for name, w in WINDOWS:
        r = window_ratio(scn, slo, t, w)
        if r is None:
            continue
        sel = f'slo:sli_error:ratio_rate{name}{{service="checkout",slo="{slo}"}}'
        tol = max(1e-12, VALUE_REL_TOL * r)
        expr = f"(abs(sum({sel}) - {fmt(r)}) <= bool {fmt(tol)}) * (count({sel}) == bool 1)"
        out += [f"      - expr: '{expr}'", f"        eval_time: {t}m",
                "        exp_samples:", "          - labels: '{}'", "            value: 1"]
    return out


def alert_exprs(scn: Scenario, t: int, only: tuple[str, str] | None = None) -> list[str]:
    """The firing (slo, severity) pairs at t; with `only`, whether that one pair fires."""
    extra = f', slo="{only[0]}", severity="{only[1]}"' if only else ""
    expr = ('group by (slo, severity) (ALERTS{alertname="ErrorBudgetBurn", '
            f'alertstate="firing", service="checkout"{extra}}})')
    firing = [p for p in alert_set(scn, t) if only is None or p == only]
    out = [f"      - expr: '{expr}'", f"        eval_time: {t}m"]
    if not firing:
        return out + ["        exp_samples: []"]
    out.append("        exp_samples:")
    for slo, severity in firing:
        out += [f"          - labels: '{{severity=\"{severity}\", slo=\"{slo}\"}}'",
                "            value: 1"]
    return out


def test_file(groups: list[str], step: int) -> str:
    head = ["# lastexam canary " + CANARY, f"rule_files: ['{RULES_PLACEHOLDER}']",
            f"evaluation_interval: {step * 60}s", "tests:"]
    return "\n".join(head + groups) + "\n"


def checks() -> dict[str, Callable[[], tuple[str, list]]]:
    sc = {s.name: s for s in SCENARIOS}

    def values(pairs: list[tuple[str, str, list[int]]], step: int = 1) -> tuple[str, list]:
        groups, expected = [], []
        for name, slo, times in pairs:
            exprs = [e for t in times for e in value_exprs(sc[name], slo, t)]
            groups.append(group_yaml(sc[name], exprs))
            expected += [{"scenario": name, "slo": slo, "t_min": t,
                          "ratios": {wn: window_ratio(sc[name], slo, t, w) for wn, w in WINDOWS}}
                         for t in times]
        return test_file(groups, step), expected

    def alerts(name: str, times: list[int], only: tuple[str, str] | None = None
               ) -> tuple[str, list]:
        scn = sc[name]
        exprs = [e for t in times for e in alert_exprs(scn, t, only)]
        expected = [{"scenario": name, "t_min": t, "only": only,
                     "firing": [list(p) for p in alert_set(scn, t) if only in (None, p)]}
                    for t in times]
        return test_file([group_yaml(scn, exprs)], scn.step), expected

    return {
        "availability-sli-values": lambda: values([
            ("hard-outage", "availability", [70, 125]),
            ("quiet-429-restart", "availability", [80, 160]),
            ("scrape-duplicates", "availability", [205])]),
        "latency-sli-values": lambda: values([
            ("latency-regression", "latency", [100, 200]),
            ("scrape-duplicates", "latency", [205])]),
        "pages-on-outage": lambda: alerts("hard-outage", [70], ("availability", "page")),
        "hard-outage-alerts": lambda: alerts("hard-outage", [58, 70, 95, 125, 200]),
        "multi-day-sli-values": lambda: values([("two-days-4.5x", "availability", [2880])], 10),
        "slow-burn-alerts": lambda: alerts("slow-burn-4.5x", [50, 240, 300]),
        "creeping-burn-alerts": lambda: alerts("creeping-1.5x", [180, 330, 360]),
        "quiet-period-alerts": lambda: alerts("quiet-429-restart", [80, 125, 160, 195]),
        "latency-regression-alerts": lambda: alerts("latency-regression", [80, 100, 165, 200]),
        "scrape-duplicates-alerts": lambda: alerts("scrape-duplicates", [140, 185, 205]),
        "short-spike-alerts": lambda: alerts("deploy-spike", [362, 364, 380]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE)
    out = parser.parse_args().out
    inputs, ref = out / "inputs", out / "reference"
    (ref / "hidden").mkdir(parents=True, exist_ok=True)
    inputs.mkdir(parents=True, exist_ok=True)
    expected = {}
    for name, build in checks().items():
        text, exp = build()
        (ref / "hidden" / f"{name}.yml").write_text(text)
        expected[name] = exp
    (ref / "expected.json").write_text(json.dumps(
        {"canary": CANARY, "placeholder": RULES_PLACEHOLDER, "checks": expected},
        indent=1, sort_keys=True) + "\n")
    (inputs / "federate-sample.prom").write_text(sample_exposition())
    for name in ("prometheus.yml", "slo-policy.md"):
        (inputs / name).write_text((HERE / "material" / name).read_text())


if __name__ == "__main__":
    main()
