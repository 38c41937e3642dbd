"""Generator of inputs/ and reference/ for oats-split-plot-eonr.

    python3 generate.py --out DIR      (run in the `rstats` environment: Rscript is needed)

The trial has the layout of Yates' (1935) oats split-plot (6 blocks, 3 varieties on whole plots,
4 nitrogen rates on sub-plots, 72 yields), but its yields are re-simulated with a seed, so the
published analyses of MASS::oats are not its answer: block, whole-plot and sub-plot effects are
drawn afresh around a quadratic nitrogen response and variety shifts of the size Yates found,
with no variety x nitrogen interaction, and rounded to whole quarter-pounds as the field book
records them. Varieties and sub-plot letters are randomised within blocks and whole plots. The reference is computed here with R by a
route independent of the oracle's aov(Error()) call: the whole-plot error from an lm on the 18
whole-plot means, the sub-plot error from an lm on the 72 sub-plots, contrast sums of squares
from the orthogonal-polynomial coefficients, SEDs from their textbook formulas.
"""

import argparse
import csv
import json
import random
import subprocess
import tempfile
from pathlib import Path

SEED = 1935
CANARY = "c1ff6f07-31d1-47b2-9319-31d5d10490ad"
PRICE_GRAIN = 0.16  # USD per kg of oat grain
PRICE_N = 1.30  # USD per kg of N

VARIETIES = {"Golden rain": 0.0, "Marvellous": 5.3, "Victory": -6.9}  # quarter-lb per sub-plot
RATES = [0.0, 0.2, 0.4, 0.6]  # cwt N per acre
MEAN_AT_ZERO = 79.0  # quarter-lb per sub-plot
N_LINEAR, N_QUADRATIC = 112.0, -66.0  # response in quarter-lb per cwt and per cwt^2
SD_BLOCK, SD_WHOLE_PLOT, SD_SUB_PLOT = 14.0, 10.0, 12.0

REFERENCE_R = r"""
args <- commandArgs(trailingOnly = TRUE)
pg <- as.numeric(args[2]); pn <- as.numeric(args[3])
raw <- read.csv(args[1], stringsAsFactors = FALSE)
kgha <- 0.25 * 0.45359237 * 80 / 0.40468564224      # quarter-lb per 1/80 acre -> kg/ha
nkg <- 112 * 0.45359237 / 0.40468564224             # cwt/acre -> kg/ha
d <- data.frame(B = factor(raw$block), V = factor(raw$variety),
                Nf = factor(raw$nitrogen_cwt_per_acre), Nk = raw$nitrogen_cwt_per_acre * nkg,
                Y = raw$yield_quarter_lb * kgha)
r <- nlevels(d$B); a <- nlevels(d$V); b <- nlevels(d$Nf)
out <- function(...) cat(sprintf("%s,%.12g\n", paste(..1, collapse = "|"), ..2))

# Whole-plot stratum from the whole-plot means (each mean of b sub-plots).
wp <- aggregate(Y ~ B + V, data = d, FUN = mean)
fw <- anova(lm(Y ~ B + V, data = wp))
ss_block <- fw["B", "Sum Sq"] * b; ss_v <- fw["V", "Sum Sq"] * b; ss_ea <- fw["Residuals", "Sum Sq"] * b
df_ea <- fw["Residuals", "Df"]
# Sub-plot stratum from the 72 sub-plots, whole plots as fixed B:V cells.
fs <- anova(lm(Y ~ B * V + Nf + V:Nf, data = d))
ss_n <- fs["Nf", "Sum Sq"]; ss_vn <- fs["V:Nf", "Sum Sq"]; ss_eb <- fs["Residuals", "Sum Sq"]
df_eb <- fs["Residuals", "Df"]
ea <- ss_ea / df_ea; eb <- ss_eb / df_eb
out(c("block", "Residuals", "df"), r - 1); out(c("block", "Residuals", "ss"), ss_block)
out(c("whole_plot", "variety", "df"), a - 1); out(c("whole_plot", "variety", "ss"), ss_v)
out(c("whole_plot", "variety", "f"), (ss_v / (a - 1)) / ea)
out(c("whole_plot", "variety", "p"), pf((ss_v / (a - 1)) / ea, a - 1, df_ea, lower.tail = FALSE))
out(c("whole_plot", "Residuals", "df"), df_ea); out(c("whole_plot", "Residuals", "ss"), ss_ea)
out(c("sub_plot", "nitrogen", "df"), b - 1); out(c("sub_plot", "nitrogen", "ss"), ss_n)
out(c("sub_plot", "nitrogen", "f"), (ss_n / (b - 1)) / eb)
out(c("sub_plot", "nitrogen", "p"), pf((ss_n / (b - 1)) / eb, b - 1, df_eb, lower.tail = FALSE))
out(c("sub_plot", "variety:nitrogen", "df"), (a - 1) * (b - 1)); out(c("sub_plot", "variety:nitrogen", "ss"), ss_vn)
out(c("sub_plot", "variety:nitrogen", "f"), (ss_vn / ((a - 1) * (b - 1))) / eb)
out(c("sub_plot", "variety:nitrogen", "p"), pf((ss_vn / ((a - 1) * (b - 1))) / eb, (a - 1) * (b - 1), df_eb, lower.tail = FALSE))
out(c("sub_plot", "Residuals", "df"), df_eb); out(c("sub_plot", "Residuals", "ss"), ss_eb)

# Orthogonal polynomial contrasts of the N means (equally spaced rates).
nmeans <- tapply(d$Y, d$Nf, mean)
cp <- contr.poly(b)
for (j in 1:3) {
  L <- sum(cp[, j] * nmeans)
  ss <- (r * a) * L^2 / sum(cp[, j]^2)
  nm <- c("linear", "quadratic", "cubic")[j]
  out(c("contrast", nm, "ss"), ss); out(c("contrast", nm, "f"), ss / eb)
  out(c("contrast", nm, "p"), pf(ss / eb, 1, df_eb, lower.tail = FALSE))
}

# Means in kg/ha.
cell <- tapply(d$Y, list(d$V, d$Nf), mean)
lab <- function(n) sprintf("%.1f", as.numeric(n))
for (v in rownames(cell)) for (n in colnames(cell)) out(c("mean", v, lab(n)), cell[v, n])
for (v in levels(d$V)) out(c("mean", v, "all"), mean(d$Y[d$V == v]))
for (n in levels(d$Nf)) out(c("mean", "all", lab(n)), mean(d$Y[d$Nf == n]))
out(c("mean", "all", "all"), mean(d$Y))
for (n in levels(d$Nf)) out(c("rate", lab(n)), as.numeric(n) * nkg)

# Standard errors of a difference and 5 % LSDs.
sed <- function(k, s, df) {
  out(c("sed", k, "sed"), s); out(c("sed", k, "df"), df)
  out(c("sed", k, "lsd"), qt(0.975, df) * s)
}
sed("variety_means", sqrt(2 * ea / (r * b)), df_ea)
sed("nitrogen_means", sqrt(2 * eb / (r * a)), df_eb)
sed("nitrogen_within_variety", sqrt(2 * eb / r), df_eb)
num <- (b - 1) * eb + ea
sed("variety_within_nitrogen", sqrt(2 * num / (r * b)),
    num^2 / (((b - 1) * eb)^2 / df_eb + ea^2 / df_ea))

# Economic optimum N from a quadratic response with block and variety as additive effects.
q <- coef(lm(Y ~ B + V + Nk + I(Nk^2), data = d))
b1 <- q[["Nk"]]; b2 <- q[["I(Nk^2)"]]
e <- (pn / pg - b1) / (2 * b2)
cap <- e < 0 || e > max(d$Nk)
e <- min(max(e, 0), max(d$Nk))
out(c("eonr", "beta_linear"), b1); out(c("eonr", "beta_quadratic"), b2); out(c("eonr", "price_ratio"), pn / pg)
out(c("eonr", "eonr_kg_n_ha"), e); out(c("eonr", "capped"), as.numeric(cap))
out(c("eonr", "yield_gain_kg_ha"), b1 * e + b2 * e^2)
out(c("eonr", "net_return_usd_ha"), pg * (b1 * e + b2 * e^2) - pn * e)
"""


def field_book(rng: random.Random) -> list[list[str]]:
    blocks = ["I", "II", "III", "IV", "V", "VI"]
    out = []
    plot = 0
    for block in blocks:
        block_effect = rng.gauss(0.0, SD_BLOCK)
        vs = sorted(VARIETIES)
        rng.shuffle(vs)
        for v in vs:
            plot += 1
            wp_effect = rng.gauss(0.0, SD_WHOLE_PLOT)
            letters = ["a", "b", "c", "d"]
            rng.shuffle(letters)
            cells = []
            for letter, n in zip(letters, RATES, strict=True):
                mean = MEAN_AT_ZERO + VARIETIES[v] + N_LINEAR * n + N_QUADRATIC * n * n
                y = round(mean + block_effect + wp_effect + rng.gauss(0.0, SD_SUB_PLOT))
                cells.append([f"{plot:02d}{letter}", block, f"{plot:02d}", v, letter, f"{n:.1f}", str(y)])
            out += sorted(cells)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    out = parser.parse_args().out
    rng = random.Random(SEED)
    inputs, ref = out / "inputs", out / "reference"
    inputs.mkdir(parents=True, exist_ok=True)
    ref.mkdir(parents=True, exist_ok=True)
    header = ["plot_id", "block", "whole_plot", "variety", "sub_plot", "nitrogen_cwt_per_acre", "yield_quarter_lb"]
    rows = field_book(rng)
    with open(inputs / "oats_field_book.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "reference.R"
        script.write_text(REFERENCE_R)
        res = subprocess.run(
            ["Rscript", str(script), str(inputs / "oats_field_book.csv"), str(PRICE_GRAIN), str(PRICE_N)],
            capture_output=True, text=True, check=True,
        ).stdout
    values = {}
    for line in res.strip().splitlines():
        key, value = line.rsplit(",", 1)
        values[key] = float(value)
    expected = {"canary": CANARY, "price_grain_usd_per_kg": PRICE_GRAIN, "price_n_usd_per_kg": PRICE_N}
    for key in sorted(values):
        node = expected
        parts = key.split("|")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = values[key]
    (ref / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
