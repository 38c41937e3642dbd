"""Inputs and reference for returns-to-schooling-iv-panel: python3 generate.py --out DIR.

The inputs start from the Mroz (1987) and Vella-Verbeek (1998) data shipped inside the
linearmodels wheel, whose textbook estimates are published (and the wheel is installed in the
sandbox). So the covariates are kept and the log wages are re-simulated from a seeded model with
endogenous schooling (an ability term in the Mroz wage error) and person effects correlated with
union and marriage status (the panel), so that the published results are not the answer. The
reference is computed here with statsmodels and NumPy from the written CSVs, independently of the
linearmodels code the oracle runs, so the two cross-check.
"""

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.api as sm
from linearmodels.datasets import mroz, wage_panel
from scipy import stats

CANARY = "44261277-a523-4867-ac24-ffd8089d6859"
YEARS = [f"y{y}" for y in range(1981, 1988)]
IV_TERMS = ["const", "educ", "exper", "expersq"]
POOLED_TERMS = ["const", "educ", "black", "hisp", "exper", "expersq", "married", "union", *YEARS]
FE_TERMS = ["expersq", "married", "union", *YEARS]
HAUSMAN_TERMS = ["expersq", "married", "union"]
SEED = 20261203
# Structural coefficients of the re-simulated wages (not the published estimates).
MROZ_BETA = {"const": -0.05, "educ": 0.068, "exper": 0.046, "expersq": -0.00095}
PANEL_BETA = {"const": 0.28, "educ": 0.083, "black": -0.11, "hisp": 0.035, "exper": 0.061,
              "expersq": -0.0031, "married": 0.072, "union": 0.105,
              "y1981": 0.021, "y1982": 0.034, "y1983": 0.041, "y1984": 0.058, "y1985": 0.066,
              "y1986": 0.083, "y1987": 0.104}


def resimulate_mroz(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """New log wages for the working women: ability is the part of schooling that family
    background does not explain, so the parents' and husband's schooling stay valid
    instruments while OLS overstates the return; the error variance grows with experience."""
    df = df.copy()
    work = (df["inlf"] == 1).to_numpy()
    w = df[work]
    Z = np.column_stack([np.ones(len(w)), w["exper"], w["expersq"], w["motheduc"], w["fatheduc"], w["huseduc"]])
    educ = w["educ"].to_numpy(float)
    ability = educ - Z @ np.linalg.lstsq(Z, educ, rcond=None)[0]
    ability /= ability.std()
    noise = rng.normal(0.0, 1.0, len(w)) * (0.38 + 0.018 * w["exper"].to_numpy())
    lwage = (MROZ_BETA["const"] + MROZ_BETA["educ"] * educ + MROZ_BETA["exper"] * w["exper"]
             + MROZ_BETA["expersq"] * w["expersq"] + 0.15 * ability + noise).to_numpy()
    lwage = np.round(lwage, 6)
    wage = np.round(np.exp(lwage), 4)
    df.loc[work, "lwage"] = lwage
    df.loc[work, "wage"] = wage
    df.loc[work, "faminc"] = np.round(w["nwifeinc"].to_numpy() * 1000 + wage * w["hours"].to_numpy()).astype(int)
    return df


def resimulate_panel(df: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """New log wages: a person effect correlated with the person's union and marriage rates
    (so fixed and random effects differ) and AR(1) idiosyncratic errors (so clustering matters)."""
    df = df.sort_values(["nr", "year"]).reset_index(drop=True)
    people = df.groupby("nr")[["union", "married"]].mean()
    effect = (0.28 * (people["union"] - people["union"].mean())
              + 0.17 * (people["married"] - people["married"].mean())
              + rng.normal(0.0, 0.31, len(people)))
    lwage = df["nr"].map(effect).to_numpy() + PANEL_BETA["const"]
    for term in ("educ", "black", "hisp", "exper", "expersq", "married", "union"):
        lwage = lwage + PANEL_BETA[term] * df[term].to_numpy()
    for y in YEARS:
        lwage = lwage + PANEL_BETA[y] * (df["year"] == int(y[1:])).to_numpy()
    shocks = rng.normal(0.0, 0.33, (len(people), 8))
    for t in range(1, 8):
        shocks[:, t] = 0.45 * shocks[:, t - 1] + np.sqrt(1 - 0.45**2) * shocks[:, t]
    df["lwage"] = np.round(lwage + shocks.ravel(), 5)
    return df


def hc1(X, u):
    n, k = X.shape
    bread = np.linalg.inv(X.T @ X)
    meat = (X * u[:, None]).T @ (X * u[:, None])
    return bread @ meat @ bread * n / (n - k)


def clustered(X, u, groups):
    """G/(G-1) * (N-1)/(N-K) sandwich, K = columns of X."""
    n, k = X.shape
    bread = np.linalg.inv(X.T @ X)
    scores = pd.DataFrame(X * u[:, None]).groupby(np.asarray(groups)).sum().to_numpy()
    g = scores.shape[0]
    return bread @ (scores.T @ scores) @ bread * (g / (g - 1)) * ((n - 1) / (n - k))


def iv_part(df):
    w = df[df["inlf"] == 1]
    y = w["lwage"].to_numpy()
    X = np.column_stack([np.ones(len(w)), w["educ"], w["exper"], w["expersq"]])
    Z = np.column_stack([np.ones(len(w)), w["exper"], w["expersq"], w["motheduc"], w["fatheduc"], w["huseduc"]])
    n = len(w)
    b_ols = np.linalg.lstsq(X, y, rcond=None)[0]
    se_ols = np.sqrt(np.diag(hc1(X, y - X @ b_ols)))
    Xh = Z @ np.linalg.lstsq(Z, X, rcond=None)[0]
    b_iv = np.linalg.solve(Xh.T @ X, Xh.T @ y)
    u = y - X @ b_iv
    # the sandwich of 2SLS uses the fitted regressors in the bread and the structural residuals
    se_iv = np.sqrt(np.diag(hc1(Xh, u)))
    fs_u = sm.OLS(w["educ"].to_numpy(), Z).fit()
    fs_r = sm.OLS(w["educ"].to_numpy(), Z[:, :3]).fit()
    df2 = n - Z.shape[1]
    f = ((fs_r.ssr - fs_u.ssr) / 3) / (fs_u.ssr / df2)
    sargan = n * sm.OLS(u, Z).fit().rsquared
    aug = sm.OLS(y, np.column_stack([X, fs_u.resid])).fit()
    wh = float(aug.tvalues[-1] ** 2)
    coefs = {
        "ols": dict(zip(IV_TERMS, zip(b_ols, se_ols, strict=False), strict=False)),
        "2sls": dict(zip(IV_TERMS, zip(b_iv, se_iv, strict=False), strict=False)),
    }
    tests = {
        "n_obs": n,
        "first_stage_f": {"stat": f, "df1": 3, "df2": df2, "pvalue": float(stats.f.sf(f, 3, df2))},
        "sargan": {"stat": sargan, "df": 2, "pvalue": float(stats.chi2.sf(sargan, 2))},
        "wu_hausman": {"stat": wh, "df1": 1, "df2": n - X.shape[1] - 1,
                       "pvalue": float(stats.f.sf(wh, 1, n - X.shape[1] - 1))},
    }
    return coefs, tests


def panel_part(df):
    df = df.sort_values(["nr", "year"]).reset_index(drop=True)
    for y in YEARS:
        df[y] = (df["year"] == int(y[1:])).astype(float)
    df["const"] = 1.0
    groups = df["nr"].to_numpy()
    y = df["lwage"].to_numpy()
    n, g = len(df), df["nr"].nunique()
    t = n // g

    Xp = df[POOLED_TERMS].to_numpy()
    b_p = np.linalg.lstsq(Xp, y, rcond=None)[0]
    se_p = np.sqrt(np.diag(clustered(Xp, y - Xp @ b_p, groups)))

    # within transformation; the person effects are nested in the clusters, so K = slopes only
    cols = ["lwage", *FE_TERMS]
    within = df[cols] - df.groupby("nr")[cols].transform("mean")
    Xw, yw = within[FE_TERMS].to_numpy(), within["lwage"].to_numpy()
    b_fe = np.linalg.lstsq(Xw, yw, rcond=None)[0]
    e_fe = yw - Xw @ b_fe
    se_fe = np.sqrt(np.diag(clustered(Xw, e_fe, groups)))
    k_fe = Xw.shape[1]
    s2_e = float(e_fe @ e_fe) / (n - g - k_fe)
    v_fe = s2_e * np.linalg.inv(Xw.T @ Xw)

    # Swamy-Arora variance components, balanced panel. The between regression's degrees of
    # freedom count only the coefficients it identifies: the year dummies' person means are
    # all 1/8, collinear with the constant.
    between = df.groupby("nr")[["lwage", *POOLED_TERMS]].mean()
    Xb, yb = between[POOLED_TERMS].to_numpy(), between["lwage"].to_numpy()
    e_b = yb - Xb @ np.linalg.lstsq(Xb, yb, rcond=None)[0]
    s2_b = float(e_b @ e_b) / (g - np.linalg.matrix_rank(Xb))
    s2_u = max(s2_b - s2_e / t, 0.0)
    theta = 1.0 - np.sqrt(s2_e / (s2_e + t * s2_u))
    cols = ["lwage", *POOLED_TERMS]
    qd = df[cols] - theta * df.groupby("nr")[cols].transform("mean")
    Xq, yq = qd[POOLED_TERMS].to_numpy(), qd["lwage"].to_numpy()
    b_re = np.linalg.lstsq(Xq, yq, rcond=None)[0]
    e_re = yq - Xq @ b_re
    se_re = np.sqrt(np.diag(clustered(Xq, e_re, groups)))
    s2_re = float(e_re @ e_re) / (n - Xq.shape[1])
    v_re = s2_re * np.linalg.inv(Xq.T @ Xq)

    i_fe = [FE_TERMS.index(x) for x in HAUSMAN_TERMS]
    i_re = [POOLED_TERMS.index(x) for x in HAUSMAN_TERMS]
    d = b_fe[i_fe] - b_re[i_re]
    vd = v_fe[np.ix_(i_fe, i_fe)] - v_re[np.ix_(i_re, i_re)]
    h = float(d @ np.linalg.solve(vd, d))
    p_h = float(stats.chi2.sf(h, len(d)))
    b_union = b_fe[FE_TERMS.index("union")]
    coefs = {
        "pooled": dict(zip(POOLED_TERMS, zip(b_p, se_p, strict=False), strict=False)),
        "re": dict(zip(POOLED_TERMS, zip(b_re, se_re, strict=False), strict=False)),
        "fe": dict(zip(FE_TERMS, zip(b_fe, se_fe, strict=False), strict=False)),
    }
    tests = {
        "n_obs": n,
        "n_entities": g,
        "re_theta": float(theta),
        "re_sigma_u": float(np.sqrt(s2_u)),
        "re_sigma_e": float(np.sqrt(s2_e)),
        "hausman": {"stat": h, "df": len(d), "pvalue": p_h, "prefer": "fe" if p_h < 0.05 else "re"},
        "fe_union_premium_pct": float(100.0 * (np.exp(b_union) - 1.0)),
    }
    return coefs, tests


def rounded(obj):
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v) for v in obj]
    if isinstance(obj, (float, np.floating)):
        return float(f"{float(obj):.10g}")
    if isinstance(obj, np.integer):
        return int(obj)
    return obj


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    (out / "reference").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    resimulate_mroz(mroz.load(), rng).to_csv(out / "inputs" / "mroz.csv", index=False, lineterminator="\n")
    resimulate_panel(wage_panel.load(), rng).to_csv(out / "inputs" / "wage_panel.csv", index=False,
                                                    lineterminator="\n")

    iv_coefs, iv_tests = iv_part(pd.read_csv(out / "inputs" / "mroz.csv"))
    pa_coefs, pa_tests = panel_part(pd.read_csv(out / "inputs" / "wage_panel.csv"))
    coefs = {
        model: {term: {"estimate": b, "std_error": s} for term, (b, s) in terms.items()}
        for model, terms in {**iv_coefs, **pa_coefs}.items()
    }
    expected = {"canary": CANARY, "coefficients": coefs, "tests": {"iv": iv_tests, "panel": pa_tests}}
    (out / "reference" / "expected.json").write_text(
        json.dumps(rounded(expected), indent=2, sort_keys=True) + "\n"
    )


if __name__ == "__main__":
    main()
