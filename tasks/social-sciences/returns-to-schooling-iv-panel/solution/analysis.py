"""Oracle for returns-to-schooling-iv-panel: the models and tests with linearmodels."""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from linearmodels.iv import IV2SLS
from linearmodels.panel import PanelOLS, PooledOLS, RandomEffects
from scipy import stats

inputs, output = Path(sys.argv[1]), Path(sys.argv[2])
YEARS = [f"y{y}" for y in range(1981, 1988)]
rows = []


def add(model, res, terms):
    for term in terms:
        rows.append({"model": model, "term": term, "estimate": f"{res.params[term]:.10g}",
                     "std_error": f"{res.std_errors[term]:.10g}"})


# IV: working women only (lwage is defined only for them)
mroz = pd.read_csv(inputs / "mroz.csv")
w = mroz[mroz["inlf"] == 1].copy()
w["const"] = 1.0
exog = w[["const", "exper", "expersq"]]
ols = IV2SLS(w["lwage"], w[["const", "educ", "exper", "expersq"]], None, None).fit(cov_type="robust", debiased=True)
iv = IV2SLS(w["lwage"], exog, w["educ"], w[["motheduc", "fatheduc", "huseduc"]]).fit(
    cov_type="robust", debiased=True)
iv_conv = IV2SLS(w["lwage"], exog, w["educ"], w[["motheduc", "fatheduc", "huseduc"]]).fit(
    cov_type="unadjusted", debiased=True)
terms = ["const", "educ", "exper", "expersq"]
add("ols", ols, terms)
add("2sls", iv, terms)
fs = iv_conv.first_stage.diagnostics.loc["educ"]
sargan, wh = iv_conv.sargan, iv_conv.wu_hausman()
iv_tests = {
    "n_obs": int(iv.nobs),
    "first_stage_f": {"stat": float(fs["f.stat"]), "df1": 3, "df2": int(iv.nobs) - 6, "pvalue": float(fs["f.pval"])},
    "sargan": {"stat": float(sargan.stat), "df": int(sargan.df), "pvalue": float(sargan.pval)},
    "wu_hausman": {"stat": float(wh.stat), "df1": int(wh.df), "df2": int(wh.df_denom), "pvalue": float(wh.pval)},
}

# Panel: 545 men, 1980-1987
wp = pd.read_csv(inputs / "wage_panel.csv")
for y in YEARS:
    wp[y] = (wp["year"] == int(y[1:])).astype(float)
wp["const"] = 1.0
wp = wp.set_index(["nr", "year"]).sort_index()
pooled_terms = ["const", "educ", "black", "hisp", "exper", "expersq", "married", "union", *YEARS]
fe_terms = ["expersq", "married", "union", *YEARS]
clu = {"cov_type": "clustered", "cluster_entity": True, "debiased": True, "group_debias": True}
pooled = PooledOLS(wp["lwage"], wp[pooled_terms]).fit(**clu)
re = RandomEffects(wp["lwage"], wp[pooled_terms]).fit(**clu)
fe = PanelOLS(wp["lwage"], wp[fe_terms], entity_effects=True).fit(**clu, count_effects=False)
add("pooled", pooled, pooled_terms)
add("re", re, pooled_terms)
add("fe", fe, fe_terms)

re_conv = RandomEffects(wp["lwage"], wp[pooled_terms]).fit(debiased=True)
fe_conv = PanelOLS(wp["lwage"], wp[fe_terms], entity_effects=True).fit(debiased=True)
h_terms = ["expersq", "married", "union"]  # time-varying regressors estimated by both
d = fe.params[h_terms] - re.params[h_terms]
vd = fe_conv.cov.loc[h_terms, h_terms] - re_conv.cov.loc[h_terms, h_terms]
h = float(d @ np.linalg.solve(vd, d))
p_h = float(stats.chi2.sf(h, len(h_terms)))
vc = re.variance_decomposition
panel_tests = {
    "n_obs": int(fe.nobs),
    "n_entities": int(fe.entity_info["total"]),
    "re_theta": float(np.asarray(re.theta).ravel()[0]),
    "re_sigma_u": float(np.sqrt(vc["Effects"])),
    "re_sigma_e": float(np.sqrt(vc["Residual"])),
    "hausman": {"stat": h, "df": len(h_terms), "pvalue": p_h, "prefer": "fe" if p_h < 0.05 else "re"},
    "fe_union_premium_pct": float(100 * np.expm1(fe.params["union"])),
}

pd.DataFrame(rows).to_csv(output / "coefficients.csv", index=False)
(output / "tests.json").write_text(json.dumps({"iv": iv_tests, "panel": panel_tests}, indent=2) + "\n")
