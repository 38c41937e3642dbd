#!/bin/bash
set -euo pipefail
python3 - <<'PY'
import csv
import json

import openpyxl

totals: dict[str, float] = {}
with open("/task/inputs/sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] = totals.get(row["region"], 0.0) + float(row["amount"])
total = round(sum(totals.values()), 6)
out = "/task/output/"
json.dump({"total": total, "regions": len(totals)}, open(out + "summary.json", "w"))
with open(out + "regions.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "amount"])
    for region, amount in totals.items():
        w.writerow([region, f"{amount:.2f}"])
wb = openpyxl.Workbook()
ws = wb.active
ws.title = "Totals"
ws["A1"], ws["B1"] = "total", total
wb.save(out + "book.xlsx")
with open(out + "codes.txt", "w") as f:
    for i, region in enumerate(totals, 1):
        f.write(f"{region.upper()}-{i:03d}\n")
PY
