"""summary.json from the workbook LibreOffice recalculated: python3 summarize.py MODEL.xlsx"""

import json
import sys

import openpyxl

wb = openpyxl.load_workbook(sys.argv[1], data_only=True)
rf = wb["RollForward"]
header = [c.value for c in rf[1]]
rows = {r[0]: dict(zip(header, r, strict=False)) for r in rf.iter_rows(min_row=2, values_only=True) if r[0]}
sched = wb["Schedule"]
sh = [c.value for c in sched[1]]
gain = sum(dict(zip(sh, r, strict=False))["gain_loss"] for r in sched.iter_rows(min_row=2, values_only=True) if r[0])
total = rows["Total"]
summary = {
    "fiscal_year_end": "2025-06-30",
    "depreciation_expense": round(total["fy_depreciation"], 2),
    "closing_cost": round(total["closing_cost"], 2),
    "closing_accumulated_depreciation": round(total["closing_accumulated"], 2),
    "closing_nbv": round(total["closing_nbv"], 2),
    "net_gain_loss_on_disposals": round(gain, 2),
    "by_category": {
        cat: {"depreciation_expense": round(v["fy_depreciation"], 2), "closing_nbv": round(v["closing_nbv"], 2)}
        for cat, v in rows.items() if cat not in ("Total",) and not str(cat).startswith("check")
    },
}
json.dump(summary, sys.stdout, indent=2)
print()
