"""summary.json from the recalculated workbook and the Phase-I decisions."""

import json
import sys

from openpyxl import load_workbook


def table(ws) -> dict[str, float]:
    return {str(r[0]): r[1] for r in ws.iter_rows(min_row=2, values_only=True) if r[0] is not None}


wb = load_workbook(sys.argv[1], data_only=True)
dec = json.loads(open(sys.argv[2]).read())
lim, cap = table(wb["Limits"]), table(wb["Capability"])
out = {
    "spec": {"LSL": cap["LSL"], "USL": cap["USL"]},
    **dec,
    "xbar_chart": {k: round(lim[f"xbar_{k}"], 7) for k in ("CL", "UCL", "LCL")},
    "r_chart": {k: round(lim[f"R_{k}"], 7) for k in ("CL", "UCL", "LCL")},
    **{k: round(cap[k], 6) for k in ("sigma_within", "sigma_overall", "Cp", "Cpk", "Pp", "Ppk", "ppm_expected")},
}
print(json.dumps(out, indent=2))
