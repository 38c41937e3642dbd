"""Oracle: retrospective cohort analysis of the reception outbreak with pandas, SciPy and statsmodels."""

import json
import math
import sys
from pathlib import Path

import pandas as pd
import statsmodels.api as sm
from scipy.stats import fisher_exact

MEAL = pd.Timestamp("2026-06-05 19:30")
ITEMS = ["bruschetta", "caesar_salad", "salmon", "chicken", "roast_potatoes", "green_beans",
         "tiramisu", "fruit_salad", "coffee", "wine"]
# how each team keyed dates, read off their interview dates (LC writes days above 12 first)
DATE_FORMAT = {"WEB": "%Y-%m-%d", "MR": "%m/%d/%Y", "LC": "%d/%m/%Y"}
Z = 1.959963984540054


def dates(df: pd.DataFrame, col: str) -> pd.Series:
    out = pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns]")
    for team, fmt in DATE_FORMAT.items():
        rows = df["team"] == team
        out[rows] = pd.to_datetime(df.loc[rows, col], format=fmt, errors="coerce")
    return out


def main(inputs: Path, output: Path) -> None:
    q = pd.read_csv(inputs / "questionnaire.csv", dtype=str, keep_default_na=False)
    guests = pd.read_csv(inputs / "guest_list.csv", dtype=str)
    q["dob_iso"] = dates(q, "dob").dt.strftime("%Y-%m-%d")
    q = q.merge(guests[["guest_id", "name", "dob"]], left_on=["name", "dob_iso"], right_on=["name", "dob"], how="inner")
    q = q.drop_duplicates("guest_id", keep="first")  # web + phone questionnaires of the same guest
    onset = dates(q, "onset_date") + pd.to_timedelta(q["onset_time"].where(q["onset_time"] != "", "00:00") + ":00")
    onset = onset.where(q["onset_date"] != "")
    inc = (onset - MEAL).dt.total_seconds() / 3600
    q = q[~(inc < 0) & ~(inc > 72)].copy()  # ill before the reception, or possible secondary cases
    inc = inc[q.index]
    q["case"] = (((q["diarrhoea"] == "Y") | (q["vomiting"] == "Y")) & inc.between(0, 72)).astype(int)
    q["incubation_h"] = inc.where(q["case"] == 1).round(4)
    q = q.sort_values("guest_id")
    q[["guest_id", "case", "incubation_h"]].to_csv(output / "cohort.csv", index=False)

    rows = []
    for it in ITEMS:
        d = q[q[it].isin(["Y", "N"])]
        a = int(((d[it] == "Y") & (d.case == 1)).sum())
        n1 = int((d[it] == "Y").sum())
        c = int(((d[it] == "N") & (d.case == 1)).sum())
        n0 = int((d[it] == "N").sum())
        t = sm.stats.Table2x2([[a, n1 - a], [c, n0 - c]])
        lo, hi = t.riskratio_confint()
        rows.append({"item": it, "exp_cases": a, "exp_total": n1, "ar_exp": a / n1, "unexp_cases": c,
                     "unexp_total": n0, "ar_unexp": c / n0, "rr": t.riskratio, "rr_lcl": lo, "rr_ucl": hi,
                     "fisher_p": fisher_exact([[a, n1 - a], [c, n0 - c]])[1]})
    table = pd.DataFrame(rows).sort_values("rr", ascending=False)
    table.to_csv(output / "food_table.csv", index=False, float_format="%.6g")
    vehicle, second = table["item"].iloc[0], table["item"].iloc[1]

    strata, num, den, var = [], 0.0, 0.0, 0.0
    d = q[q[vehicle].isin(["Y", "N"]) & q[second].isin(["Y", "N"])]
    for level in ("Y", "N"):
        s = d[d[vehicle] == level]
        a = int(((s[second] == "Y") & (s.case == 1)).sum())
        n1 = int((s[second] == "Y").sum())
        b = int(((s[second] == "N") & (s.case == 1)).sum())
        n0 = int((s[second] == "N").sum())
        strata.append([[a, n1 - a], [b, n0 - b]])
        T = n1 + n0
        num, den = num + a * n0 / T, den + b * n1 / T
        var += ((a + b) * n1 * n0 - a * b * T) / T**2
    mh = sm.stats.StratifiedTable(strata).riskratio_pooled
    se = math.sqrt(var / (num * den))  # Greenland-Robins
    cases = q[q.case == 1]
    bins = (cases["incubation_h"] // 6).astype(int)
    curve = [int((bins == k).sum()) for k in range(int(bins.max()) + 1)]
    summary = {"cohort_size": len(q), "cases": len(cases), "attack_rate": len(cases) / len(q),
               "incubation_median_h": float(cases["incubation_h"].median()),
               "incubation_min_h": float(cases["incubation_h"].min()),
               "incubation_max_h": float(cases["incubation_h"].max()),
               "vehicle": vehicle, "second_item": second, "second_mh_rr": mh,
               "second_mh_lcl": mh * math.exp(-Z * se), "second_mh_ucl": mh * math.exp(Z * se),
               "epi_curve_6h": curve}
    (output / "summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
