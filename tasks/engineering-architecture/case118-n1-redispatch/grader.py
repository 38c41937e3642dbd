"""Grader for case118-n1-redispatch.

The screening is compared with the reference screening of the schedule (reference/screening.json,
made by generate.py with the study model). The redispatch is re-run in the same pandapower
study model (solution/study_model.py): base case and every contingency, exact feasibility, then
its cost premium against the reference redispatch's.
"""

from __future__ import annotations

import sys

from lastexam.grading import GradeContext, Outcome, Rubric, get, load_csv, load_json, near, same_set

COLUMNS = ["contingency_id", "converged", "deenergised_buses", "lost_load_mw", "max_loading_pct",
           "max_loading_branch", "overloaded_branches", "min_vm_pu", "max_vm_pu", "voltage_violations", "secure"]
# Tolerances: the reference and a correct agent solve the same AC model with pandapower's
# Newton-Raphson (mismatch tolerance 1e-8 MVA); what remains is rounding of the written
# values. 0.5 points of loading and 0.002 pu are far above that and far below the effect of a
# modelling error (MVA instead of current, normal instead of emergency rating, a single slack,
# a transformer rating written into sn_mva).
LOADING_TOL = 0.5
VM_TOL = 0.002
LOST_LOAD_TOL = 0.5


def num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def compare_rows(seen: dict[str, dict], ref: list[dict], pick, test, what: str, only=None) -> Outcome:
    misses, n = [], 0
    for r in ref:
        if only is not None and not only(r):
            continue
        n += 1
        s = seen.get(r["contingency_id"])
        ok = s is not None and test(pick(s), pick(r))
        if not ok:
            misses.append({"id": r["contingency_id"], "expected": pick(r), "seen": pick(s) if s else "<missing row>"})
    if misses:
        return Outcome(False, f"{len(misses)} of {n} rows differ in {what}", expected="see misses", seen=misses[:6])
    return Outcome(True, f"all {n} rows agree in {what}")


def close(tol):
    def test(a, b):
        if isinstance(a, tuple):
            return all(close(tol)(x, y) for x, y in zip(a, b, strict=False))
        x, y = num(a), num(b)
        if y is None:
            return (a or "") == (b or "")
        return x is not None and abs(x - y) <= tol
    return test


def exact(a, b) -> bool:
    if isinstance(a, tuple):
        return all(exact(x, y) for x, y in zip(a, b, strict=False))
    x, y = num(a), num(b)
    if x is not None and y is not None:
        return x == y
    return (a or "").strip() == (b or "").strip()


def id_set(seen, expected: list[str]) -> Outcome:
    """same_set for a list of ids; anything but a list of strings fails instead of raising."""
    if not isinstance(seen, list) or not all(isinstance(x, str) for x in seen):
        return Outcome(False, "not a list of ids", expected=expected, seen=seen if seen is not None else None)
    return same_set(seen, expected)


def read_dispatch(rows, study) -> tuple[dict[str, float] | None, Outcome]:
    if rows is None:
        return None, Outcome(False, "redispatch.csv unusable")
    wanted = {u["unit_id"]: u for u in study.dispatchable}
    got, problems = {}, []
    for row in rows:
        uid = (row.get("unit_id") or "").strip()
        p = num(row.get("p_mw"))
        if uid not in wanted:
            problems.append(f"{uid!r} is not a dispatchable unit")
        elif p is None:
            problems.append(f"{uid}: p_mw {row.get('p_mw')!r}")
        elif uid in got:
            problems.append(f"{uid} listed twice")
        else:
            got[uid] = p
    missing = sorted(set(wanted) - set(got))
    if missing:
        problems.append(f"missing units {missing}")
    limits = [f"{uid}={p} outside [{wanted[uid]['p_min_mw']}, {wanted[uid]['p_max_mw']}]"
              for uid, p in sorted(got.items())
              if not wanted[uid]["p_min_mw"] - 1e-6 <= p <= wanted[uid]["p_max_mw"] + 1e-6]
    problems += limits
    if problems:
        return None, Outcome(False, f"{len(problems)} problems", expected="every dispatchable unit once, within limits",
                             seen=problems[:8])
    return got, Outcome(True, f"{len(got)} units, all within their limits")


def grade(ctx: GradeContext) -> Rubric:
    sys.path.insert(0, str(ctx.task / "solution"))
    import study_model as sm

    r = Rubric()
    exp = ctx.reference_json("expected.json")
    ref_rows = ctx.reference_json("screening.json")["rows"]
    ref_by_id = {x["contingency_id"]: x for x in ref_rows}
    study = sm.load_study(ctx.inputs)

    rows, table_ok = load_csv(ctx.out("contingency_results.csv"), required_columns=COLUMNS)
    seen = {}
    for row in rows or []:
        seen.setdefault((row.get("contingency_id") or "").strip(), row)
    summary, summary_ok = load_json(ctx.out("summary.json"))
    sched = get(summary, "schedule") if summary_ok.passed else None

    def screening(what: str, pick, test, only=None, cases=ref_rows) -> Outcome:
        if rows is None:
            return table_ok
        return compare_rows(seen, cases, pick, test, what, only)

    # --- Task 1: screening of the schedule -------------------------------------------------
    r.check("schedule base case: loading, overloads and voltages", 2, screening(
        "base-case loading, overload count and voltages",
        lambda x: (x.get("max_loading_pct"), x.get("overloaded_branches"), x.get("min_vm_pu"), x.get("max_vm_pu")),
        lambda a, b: close(LOADING_TOL)(a[0], b[0]) and exact(a[1], b[1]) and close(VM_TOL)(a[2:], b[2:]),
        cases=[ref_by_id["BASE"]]))
    r.check("convergence, de-energised buses and lost load per contingency", 2, screening(
        "islanding and convergence", lambda x: (x.get("converged"), x.get("deenergised_buses"), x.get("lost_load_mw")),
        lambda a, b: exact(a[:2], b[:2]) and close(LOST_LOAD_TOL)(a[2], b[2])))
    r.check("maximum branch loading of every case within 0.5 points", 3, screening(
        "max_loading_pct", lambda x: x.get("max_loading_pct"), close(LOADING_TOL)))
    clear = set(exp["clear_maximum_cases"])
    r.check("branch holding the maximum loading where it is clear", 1, screening(
        "max_loading_branch", lambda x: (x.get("max_loading_branch") or "").strip(), exact,
        only=lambda x: x["contingency_id"] in clear))
    r.check("extreme bus voltages of every case within 0.002 pu", 2, screening(
        "min/max voltage", lambda x: (x.get("min_vm_pu"), x.get("max_vm_pu")), close(VM_TOL)))
    r.check("overload and voltage-violation counts and secure flags", 2, screening(
        "counts and secure flag", lambda x: (x.get("overloaded_branches"), x.get("voltage_violations"), x.get("secure")),
        exact))

    ref_insecure = [x["contingency_id"] for x in ref_rows if x["contingency_id"] != "BASE" and x["secure"] == "0"]
    if sched is None or not isinstance(sched, dict):
        lists = Outcome(False, "summary.json has no 'schedule' object" if summary_ok.passed else summary_ok.message)
    else:
        parts = [id_set(get(sched, "insecure_contingencies"), ref_insecure),
                 id_set(get(sched, "base_case_overloads"), exp["schedule_base_overloads"]),
                 Outcome(get(sched, "worst_contingency") == exp["schedule_worst_contingency"], "worst_contingency",
                         expected=exp["schedule_worst_contingency"], seen=get(sched, "worst_contingency"))]
        bad = [p for p in parts if not p.passed]
        lists = Outcome(not bad, "; ".join(p.message for p in bad) if bad else "insecure set, base overloads and worst case agree",
                        expected=None if not bad else bad[0].expected, seen=None if not bad else bad[0].seen)
    r.check("summary: insecure contingencies, base-case overloads, worst contingency", 2, lists)
    if sched is None or not isinstance(sched, dict):
        sched_num = Outcome(False, "no schedule summary")
    else:
        a = near(get(sched, "slack_p_mw"), exp["schedule_slack_mw"], abs=0.5)
        # 5 EUR/h on ~1.3e5 EUR/h: rounding only; a wrong slack output or cost basis is far off.
        b = near(get(sched, "cost_eur_per_h"), exp["schedule_cost_eur_h"], abs=5.0)
        sched_num = Outcome(a.passed and b.passed, f"slack {a.message}; cost {b.message}",
                            expected=[exp["schedule_slack_mw"], exp["schedule_cost_eur_h"]],
                            seen=[get(sched, "slack_p_mw"), get(sched, "cost_eur_per_h")])
    r.check("summary: schedule slack output and cost", 1, sched_num)

    # --- Task 2: the redispatch, re-run ----------------------------------------------------
    drows, dok = load_csv(ctx.out("redispatch.csv"), required_columns=["unit_id", "p_mw"])
    dispatch, limits = read_dispatch(drows if dok.passed else None, study)
    if not dok.passed:
        limits = dok
    r.check("redispatch lists every dispatchable unit within its limits", 2, limits)
    results = sm.screen(study, dispatch) if dispatch is not None else None
    if results is None:
        base_ok = post_ok = Outcome(False, "no usable redispatch to run")
    else:
        base = results[0]
        if not base.converged:
            base_ok = post_ok = Outcome(False, "the base-case power flow does not converge")
        else:
            s = study.slack
            problems = [f"{b} at {v:.2f} % of rate A" for b, v in sorted(base.loadings.items()) if v > 100.0]
            problems += [f"bus {b} at {base.vm[b]:.4f} pu" for b in base.voltage_violations]
            if not s["p_min_mw"] <= base.slack_p_mw <= s["p_max_mw"]:
                problems.append(f"slack unit at {base.slack_p_mw:.1f} MW outside [{s['p_min_mw']}, {s['p_max_mw']}]")
            base_ok = Outcome(not problems, "base case secure, slack unit within limits" if not problems
                              else f"{len(problems)} base-case violations", seen=problems[:8] or None)
            post_problems = []
            for c in results[1:]:
                if not c.converged:
                    post_problems.append(f"{c.case_id}: no convergence")
                elif c.overloads:
                    worst = max(c.overloads, key=lambda b: c.loadings[b])
                    post_problems.append(f"{c.case_id}: {worst} at {c.loadings[worst]:.2f} % of rate B")
            post_ok = Outcome(not post_problems, f"all {len(results) - 1} contingencies converge without overload"
                              if not post_problems else f"{len(post_problems)} contingencies insecure",
                              seen=post_problems[:8] or None)
    r.check("base case secure under the redispatch", 3, base_ok)
    r.check("every contingency thermally secure under the redispatch", 4, post_ok)

    if results is not None and base_ok.passed and post_ok.passed and limits.passed:
        cost = sm.dispatch_cost(study, dispatch, results[0].slack_p_mw)
        ref_premium = exp["reference_redispatch_cost_eur_h"] - exp["schedule_cost_eur_h"]
        bound = exp["schedule_cost_eur_h"] + (1 + exp["cost_premium_tolerance"]) * ref_premium
        cost_ok = Outcome(cost <= bound, f"cost {cost:.1f} EUR/h, premium {cost - exp['schedule_cost_eur_h']:.1f} "
                          f"vs reference premium {ref_premium:.1f}", expected=f"<= {bound:.1f}", seen=round(cost, 1))
    else:
        cost = None
        cost_ok = Outcome(False, "only a secure redispatch within limits is priced")
    r.check("redispatch cost premium within 15 % of the reference premium", 3, cost_ok)

    red = get(summary, "redispatch") if summary_ok.passed else None
    if cost is None and results is not None and results[0].converged and dispatch is not None:
        cost = sm.dispatch_cost(study, dispatch, results[0].slack_p_mw)
    if not isinstance(red, dict) or cost is None:
        red_ok = Outcome(False, "no redispatch summary or no re-run to compare with")
    else:
        a = near(get(red, "slack_p_mw"), results[0].slack_p_mw, abs=0.5)
        b = near(get(red, "cost_eur_per_h"), cost, abs=5.0)
        red_ok = Outcome(a.passed and b.passed, f"slack {a.message}; cost {b.message}",
                         expected=[round(results[0].slack_p_mw, 2), round(cost, 1)],
                         seen=[get(red, "slack_p_mw"), get(red, "cost_eur_per_h")])
    r.check("summary: redispatch slack output and cost match the re-run", 1, red_ok)
    return r
