# Oracle for oats-split-plot-eonr: split-plot ANOVA with error strata, N polynomial contrasts,
# SEDs/LSDs per stratum and the economic optimum N rate.
#   Rscript analysis.R FIELD_BOOK.csv OUTPUT_DIR
args <- commandArgs(trailingOnly = TRUE)
out_dir <- args[2]
fb <- read.csv(args[1], stringsAsFactors = FALSE)

lb_to_kg <- 0.45359237
acre_to_ha <- 0.40468564224
to_kgha <- 0.25 * lb_to_kg / (acre_to_ha / 80)       # 1/4 lb per 1/80-acre sub-plot -> kg/ha
cwt_to_kgha <- 112 * lb_to_kg / acre_to_ha           # cwt/acre -> kg/ha
price_grain <- 0.16
price_n <- 1.30

d <- data.frame(
  block = factor(fb$block),
  variety = factor(fb$variety),
  nitrogen = factor(sprintf("%.1f", fb$nitrogen_cwt_per_acre)),
  n_kg = fb$nitrogen_cwt_per_acre * cwt_to_kgha,
  yield = fb$yield_quarter_lb * to_kgha
)
contrasts(d$nitrogen) <- contr.poly(4)

fit <- aov(yield ~ variety * nitrogen + Error(block / variety), data = d)
tabs <- summary(fit, split = list(nitrogen = list(linear = 1, quadratic = 2, cubic = 3)))
strata <- c("Error: block" = "block", "Error: block:variety" = "whole_plot", "Error: Within" = "sub_plot")

anova_rows <- list(); contrast_rows <- list()
for (s in names(tabs)) {
  t <- tabs[[s]][[1]]
  terms <- trimws(rownames(t))
  for (i in seq_along(terms)) {
    term <- terms[i]
    if (grepl("^nitrogen: ", term)) {
      contrast_rows[[length(contrast_rows) + 1]] <- data.frame(
        contrast = sub("^nitrogen: ", "", term), df = t$Df[i], sum_sq = t$`Sum Sq`[i],
        f_value = t$`F value`[i], p_value = t$`Pr(>F)`[i])
      next
    }
    if (grepl("^variety:nitrogen: ", term)) next
    anova_rows[[length(anova_rows) + 1]] <- data.frame(
      stratum = strata[[s]], term = term, df = t$Df[i], sum_sq = t$`Sum Sq`[i],
      mean_sq = t$`Mean Sq`[i], f_value = t$`F value`[i], p_value = t$`Pr(>F)`[i])
  }
}
anova_tab <- do.call(rbind, anova_rows)
write.csv(anova_tab, file.path(out_dir, "anova.csv"), row.names = FALSE, na = "")
write.csv(do.call(rbind, contrast_rows), file.path(out_dir, "contrasts.csv"), row.names = FALSE)

rate <- function(n) round(as.numeric(as.character(n)) * cwt_to_kgha, 2)
cells <- aggregate(yield ~ variety + nitrogen, data = d, FUN = mean)
v_m <- aggregate(yield ~ variety, data = d, FUN = mean)
n_m <- aggregate(yield ~ nitrogen, data = d, FUN = mean)
means <- rbind(
  data.frame(variety = as.character(cells$variety), nitrogen_kg_ha = as.character(rate(cells$nitrogen)), yield_kg_ha = cells$yield),
  data.frame(variety = as.character(v_m$variety), nitrogen_kg_ha = "all", yield_kg_ha = v_m$yield),
  data.frame(variety = "all", nitrogen_kg_ha = as.character(rate(n_m$nitrogen)), yield_kg_ha = n_m$yield),
  data.frame(variety = "all", nitrogen_kg_ha = "all", yield_kg_ha = mean(d$yield))
)
means$yield_kg_ha <- round(means$yield_kg_ha, 3)
write.csv(means, file.path(out_dir, "means.csv"), row.names = FALSE)

ms <- function(stratum) anova_tab$mean_sq[anova_tab$stratum == stratum & anova_tab$term == "Residuals"]
dfe <- function(stratum) anova_tab$df[anova_tab$stratum == stratum & anova_tab$term == "Residuals"]
ea <- ms("whole_plot"); eb <- ms("sub_plot"); fa <- dfe("whole_plot"); fb_ <- dfe("sub_plot")
r <- nlevels(d$block); a <- nlevels(d$variety); b <- nlevels(d$nitrogen)
combo <- (b - 1) * eb + ea
cmp <- data.frame(
  comparison = c("variety_means", "nitrogen_means", "nitrogen_within_variety", "variety_within_nitrogen"),
  sed = c(sqrt(2 * ea / (r * b)), sqrt(2 * eb / (r * a)), sqrt(2 * eb / r), sqrt(2 * combo / (r * b))),
  df = c(fa, fb_, fb_, combo^2 / (((b - 1) * eb)^2 / fb_ + ea^2 / fa))
)
cmp$lsd_5pct <- qt(0.975, cmp$df) * cmp$sed
write.csv(cmp, file.path(out_dir, "comparisons.csv"), row.names = FALSE)

quad <- lm(yield ~ block + variety + n_kg + I(n_kg^2), data = d)
b1 <- coef(quad)[["n_kg"]]; b2 <- coef(quad)[["I(n_kg^2)"]]
ratio <- price_n / price_grain
eonr <- (ratio - b1) / (2 * b2)
capped <- eonr < 0 || eonr > max(d$n_kg)
eonr <- min(max(eonr, 0), max(d$n_kg))
gain <- b1 * eonr + b2 * eonr^2
json <- sprintf(paste0(
  '{\n  "beta_linear": %.10g,\n  "beta_quadratic": %.10g,\n  "price_ratio": %.10g,\n',
  '  "eonr_kg_n_ha": %.6f,\n  "capped": %s,\n  "yield_gain_kg_ha": %.4f,\n  "net_return_usd_ha": %.4f\n}\n'),
  b1, b2, ratio, eonr, tolower(as.character(capped)), gain, price_grain * gain - price_n * eonr)
writeLines(json, file.path(out_dir, "eonr.json"), sep = "")
