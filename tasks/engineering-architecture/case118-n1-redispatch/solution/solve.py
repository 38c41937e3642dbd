"""Oracle for case118-n1-redispatch: screen the day-ahead schedule (base case + N-1) with the AC
study model in pandapower, then find a preventive redispatch that is thermally N-1 secure at
least cost (scopf.py: the linearised SCOPF, LPs solved exactly), verify it with a full AC
screening, and write the deliverables."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scopf
import study_model as sm


def main() -> None:
    inputs = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/task/inputs")
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("/task/output")
    out.mkdir(parents=True, exist_ok=True)
    study = sm.load_study(inputs)
    sched = sm.schedule(study)
    results = sm.screen(study, sched, detail=True)
    with open(out / "contingency_results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=sm.RESULT_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in results:
            w.writerow(sm.result_row(r))
    base = results[0]
    ranked = sorted(results[1:], key=lambda r: (r.converged, -(r.max_loading[1] or 0.0), r.case_id))
    summary = {
        "schedule": {
            "slack_p_mw": round(base.slack_p_mw, 2),
            "cost_eur_per_h": round(sm.dispatch_cost(study, sched, base.slack_p_mw), 1),
            "base_case_overloads": base.overloads,
            "insecure_contingencies": [r.case_id for r in results[1:] if not r.secure],
            "worst_contingency": ranked[0].case_id,
        }
    }
    dispatch, check = scopf.redispatch(study, sched, first=results)
    with open(out / "redispatch.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["unit_id", "p_mw"])
        for uid in sorted(dispatch, key=lambda u: int(u[1:])):
            w.writerow([uid, f"{dispatch[uid]:.2f}"])
    summary["redispatch"] = {
        "slack_p_mw": round(check[0].slack_p_mw, 2),
        "cost_eur_per_h": round(sm.dispatch_cost(study, dispatch, check[0].slack_p_mw), 1),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
