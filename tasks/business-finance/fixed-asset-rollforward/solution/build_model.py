"""Writes the fixed-asset model as live formulas (openpyxl); LibreOffice then computes it.

    python3 build_model.py REGISTER.csv OUT.xlsx [--mistake ddb-no-switch|no-mid-month]

The --mistake flags build the negative fixtures from the same layout.
"""

import argparse
import csv
from datetime import date

import openpyxl
from openpyxl.styles import Font

CATEGORIES = ["Land", "Buildings", "Machinery & equipment", "Vehicles", "Computer equipment",
              "Furniture & fixtures"]
REGISTER_COLUMNS = ["asset_id", "description", "category", "in_service_date", "cost", "salvage_value",
                    "useful_life_years", "method", "disposal_date", "disposal_proceeds"]
SCHEDULE_COLUMNS = ["asset_id", "category", "method", "life_months", "first_dep_month",
                    "last_dep_month_before_disposal", "months_before_fy", "months_through_fy",
                    "opening_cost", "additions", "disposals_cost", "opening_accumulated",
                    "fy_depreciation", "disposals_accumulated", "closing_accumulated", "closing_nbv",
                    "gain_loss"]
ROLLFORWARD_COLUMNS = ["category", "opening_cost", "additions", "disposals_cost", "closing_cost",
                       "opening_accumulated", "fy_depreciation", "disposals_accumulated",
                       "closing_accumulated", "closing_nbv"]


def register_sheet(wb, path):
    ws = wb.create_sheet("Register")
    ws.append(REGISTER_COLUMNS)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            ws.append([
                row["asset_id"], row["description"], row["category"],
                date.fromisoformat(row["in_service_date"]),
                float(row["cost"]), float(row["salvage_value"]),
                int(row["useful_life_years"]) if row["useful_life_years"] else None,
                row["method"],
                date.fromisoformat(row["disposal_date"]) if row["disposal_date"] else None,
                float(row["disposal_proceeds"]) if row["disposal_proceeds"] else None,
            ])
    for row in ws.iter_rows(min_row=2, min_col=4, max_col=9):
        for cell in (row[0], row[5]):
            cell.number_format = "yyyy-mm-dd"
    return ws.max_row


def assumptions_sheet(wb):
    ws = wb.create_sheet("Assumptions")
    ws.append(["item", "value", "note"])
    ws.append(["fy_start", date(2024, 7, 1), "first day of FY2025"])
    ws.append(["fy_end", date(2025, 6, 30), "last day of FY2025"])
    ws.append(["fy_start_month", "=YEAR(B2)*12+MONTH(B2)-1", "month index (year*12 + month - 1)"])
    ws.append(["fy_end_month", "=YEAR(B3)*12+MONTH(B3)-1", "month index"])
    ws.append(["mid_month_day", 15, "in service on or before this day: depreciate from that month"])
    ws["B2"].number_format = ws["B3"].number_format = "yyyy-mm-dd"


def schedule_sheet(wb, last_row, mistake):
    ws = wb.create_sheet("Schedule")
    ws.append(SCHEDULE_COLUMNS)
    cut = "Assumptions!$B$6"
    for r in range(2, last_row + 1):
        reg = lambda col: f"Register!{col}{r}"  # noqa: E731
        cost, salvage, life = reg("E"), reg("F"), f"D{r}"
        if mistake == "no-mid-month":
            start = f"=YEAR({reg('D')})*12+MONTH({reg('D')})-1"
        else:
            start = f"=YEAR({reg('D')})*12+MONTH({reg('D')})-1+IF(DAY({reg('D')})>{cut},1,0)"

        def dep(x, y):
            # The ddb-no-switch fixture keeps declining balance to the end (VDB's no_switch).
            no_switch = "TRUE()" if mistake == "ddb-no-switch" else "FALSE()"
            ddb = f"IF({y}>{x},VDB({cost},{salvage},{life},{x},{y},2,{no_switch}),0)"
            return (f'=IF(C{r}="SL",({cost}-{salvage})/{life}*({y}-{x}),'
                    f'IF(C{r}="DDB",{ddb},0))')

        ws.append([
            f"={reg('A')}", f"={reg('C')}", f"={reg('H')}",
            f'=IF(C{r}="NONE",0,{reg("G")}*12)',
            start,
            f"=IF(ISBLANK({reg('I')}),999999,YEAR({reg('I')})*12+MONTH({reg('I')})-1"
            f"-IF(DAY({reg('I')})<={cut},1,0))",
            f"=MAX(0,MIN(D{r},Assumptions!$B$4-E{r}))",
            f"=MAX(0,MIN(D{r},MIN(Assumptions!$B$5,F{r})-E{r}+1))",
            f"=IF({reg('D')}<Assumptions!$B$2,{cost},0)",
            f"={cost}-I{r}",
            f"=IF(ISBLANK({reg('I')}),0,{cost})",
            dep("0", f"G{r}"),
            dep(f"G{r}", f"H{r}"),
            f"=IF(K{r}=0,0,L{r}+M{r})",
            f"=L{r}+M{r}-N{r}",
            f"=I{r}+J{r}-K{r}-O{r}",
            f"=IF(K{r}=0,0,{reg('J')}-({cost}-N{r}))",
        ])
    for row in ws.iter_rows(min_row=2, min_col=9, max_col=17):
        for cell in row:
            cell.number_format = "#,##0.00"


def rollforward_sheet(wb, last_row):
    ws = wb.create_sheet("RollForward")
    ws.append(ROLLFORWARD_COLUMNS)
    source = {"opening_cost": "I", "additions": "J", "disposals_cost": "K", "opening_accumulated": "L",
              "fy_depreciation": "M", "disposals_accumulated": "N", "closing_accumulated": "O"}
    for i, cat in enumerate(CATEGORIES, start=2):
        row = [cat]
        for name in ROLLFORWARD_COLUMNS[1:]:
            if name == "closing_cost":
                row.append(f"=B{i}+C{i}-D{i}")
            elif name == "closing_nbv":
                row.append(f"=E{i}-I{i}")
            else:
                col = source[name]
                row.append(f"=SUMIF(Schedule!$B$2:$B${last_row},$A{i},Schedule!${col}$2:${col}${last_row})")
        ws.append(row)
    total = len(CATEGORIES) + 2
    ws.append(["Total", *[f"=SUM({c}2:{c}{total - 1})" for c in "BCDEFGHIJ"]])
    ws.append([])
    ws.append(["check: Schedule NBV - RollForward NBV", f"=SUM(Schedule!P2:P{last_row})-J{total}"])
    for row in ws.iter_rows(min_row=2, max_row=total, min_col=2, max_col=10):
        for cell in row:
            cell.number_format = "#,##0.00"
    for cell in ws[total]:
        cell.font = Font(bold=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("register")
    p.add_argument("out")
    p.add_argument("--mistake", choices=["ddb-no-switch", "no-mid-month"])
    p.add_argument("--no-rollforward", action="store_true")
    a = p.parse_args()
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    last = register_sheet(wb, a.register)
    assumptions_sheet(wb)
    schedule_sheet(wb, last, a.mistake)
    if not a.no_rollforward:
        rollforward_sheet(wb, last)
    wb.save(a.out)


if __name__ == "__main__":
    main()
