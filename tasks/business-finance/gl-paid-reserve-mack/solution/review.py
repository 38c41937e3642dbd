"""Oracle: paid triangle from the payment extract, then chainladder's volume-weighted
development, MackChainladder, BornhuetterFerguson and CapeCod."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import chainladder as cl
import numpy as np
import pandas as pd

VALUATION = "2025-12-31"
RECOVERIES = ("SAL", "SUB")


def triangle(inputs: Path) -> cl.Triangle:
    pay = pd.read_csv(inputs / "claim_payments.csv", dtype={"payment_id": str, "transaction_code": str})
    pay = pay.drop_duplicates("payment_id")  # two monthly loads overlap in the extract
    pay = pay[(pay.payment_date <= VALUATION) & (pay.transaction_code != "ALAE")]
    pay = pay.assign(net=np.where(pay.transaction_code.isin(RECOVERIES), -pay.amount, pay.amount),
                     origin=pay.accident_date.str[:4], valuation=pay.payment_date.str[:4])
    inc = pay.groupby(["origin", "valuation"], as_index=False).net.sum()
    return cl.Triangle(inc, origin="origin", development="valuation", columns="net", cumulative=False).incr_to_cum()


def review(inputs: Path, out: Path) -> None:
    tri = triangle(inputs)
    prem = pd.read_csv(inputs / "premium.csv")
    dev = cl.Development(average="volume", sigma_interpolation="mack").fit(tri)
    tri_dev = dev.transform(tri)
    mack = cl.MackChainladder().fit(tri_dev)
    weights = prem.assign(origin=prem.accident_year.astype(str), valuation=VALUATION[:4],
                          apriori=prem.earned_premium * prem.plan_loss_ratio)
    w = cl.Triangle(weights, origin="origin", development="valuation", columns=["earned_premium", "apriori"], cumulative=True)
    bf = cl.BornhuetterFerguson(apriori=1.0).fit(tri_dev, sample_weight=w["apriori"].latest_diagonal)
    cc = cl.CapeCod(trend=0, decay=1).fit(tri_dev, sample_weight=w["earned_premium"].latest_diagonal)

    frame = tri.to_frame(origin_as_datetime=False)
    years = [int(str(o)[:4]) for o in frame.index]
    cells = [(y, int(age), float(v)) for y, (_, row) in zip(years, frame.iterrows(), strict=True)
             for age, v in row.items() if not np.isnan(v)]
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(cells, columns=["accident_year", "dev_months", "cumulative_paid"]).round(2).to_csv(out / "triangle.csv", index=False)

    summ = mack.summary_.to_frame(origin_as_datetime=False)
    latest = summ["Latest"].to_numpy()
    ult = summ["Ultimate"].to_numpy()
    se = np.nan_to_num(summ["Mack Std Err"].to_numpy())
    bf_ult = bf.ultimate_.to_frame(origin_as_datetime=False).iloc[:, 0].to_numpy()
    cc_ult = cc.ultimate_.to_frame(origin_as_datetime=False).iloc[:, 0].to_numpy()
    res = pd.DataFrame({"accident_year": years, "paid_to_date": latest.round(2), "cdf": (ult / latest).round(6),
                        "cl_ultimate": ult.round(2), "cl_reserve": (ult - latest).round(2), "mack_se": se.round(2),
                        "bf_ultimate": bf_ult.round(2), "cc_ultimate": cc_ult.round(2)})
    res.to_csv(out / "reserves.csv", index=False)

    ldf = dev.ldf_.to_frame(origin_as_datetime=False).iloc[0]
    total_se = float(np.asarray(mack.total_mack_std_err_).ravel()[0])
    reserve = float((ult - latest).sum())
    summary = {
        "valuation_date": VALUATION,
        "ldf": {str(k): round(float(v), 6) for k, v in ldf.items()},
        "total": {"paid_to_date": round(float(latest.sum()), 2), "cl_reserve": round(reserve, 2),
                  "mack_se": round(total_se, 2), "mack_cv": round(total_se / reserve, 6),
                  "bf_reserve": round(float((bf_ult - latest).sum()), 2),
                  "cc_reserve": round(float((cc_ult - latest).sum()), 2),
                  "cape_cod_elr": round(float(np.asarray(cc.apriori_.values).ravel()[0]), 6)},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    review(Path(sys.argv[1]), Path(sys.argv[2]))
