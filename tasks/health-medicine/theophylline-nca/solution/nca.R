# Non-compartmental analysis of the theophylline study, by the rules of the instruction.
args <- commandArgs(trailingOnly = TRUE)
infile <- args[1]; outdir <- args[2]

raw <- read.csv(infile, colClasses = "character")
raw <- raw[raw$CONC_MGL != "", ]                       # samples not collected
raw$TIME_H <- as.numeric(raw$TIME_H)
blq <- raw$CONC_MGL == "BLQ"
raw <- raw[!blq | raw$TIME_H == 0, ]                   # post-dose BLQ are dropped
raw$CONC <- ifelse(raw$CONC_MGL == "BLQ", 0, suppressWarnings(as.numeric(raw$CONC_MGL)))

auc_linlog <- function(t, c) {
  auc <- 0
  for (i in seq_along(t)[-1]) {
    dt <- t[i] - t[i - 1]
    if (c[i] < c[i - 1] && c[i] > 0) auc <- auc + dt * (c[i - 1] - c[i]) / log(c[i - 1] / c[i])
    else auc <- auc + dt * (c[i - 1] + c[i]) / 2
  }
  auc
}

fit_lambda_z <- function(t, c) {
  imax <- which.max(c)
  keep <- t > t[imax] & c > 0
  tt <- t[keep]; cc <- c[keep]
  fits <- NULL
  for (n in 3:length(tt)) {
    idx <- (length(tt) - n + 1):length(tt)
    m <- lm(log(cc[idx]) ~ tt[idx])
    fits <- rbind(fits, data.frame(n = n, slope = coef(m)[[2]],
                                   adj = summary(m)$adj.r.squared, tstart = tt[idx[1]]))
  }
  ok <- fits[fits$adj >= max(fits$adj) - 1e-4, ]
  ok[which.max(ok$n), ]
}

subjects <- NULL
for (sid in sort(unique(raw$SUBJID))) {
  d <- raw[raw$SUBJID == sid, ]
  d <- d[order(d$TIME_H), ]
  dose <- as.numeric(d$DOSE_MGKG[1]) * as.numeric(d$WT_KG[1])
  t <- d$TIME_H; c <- d$CONC
  auclast <- auc_linlog(t, c)
  lz <- fit_lambda_z(t, c)
  lam <- -lz$slope
  clast <- tail(c, 1)
  aucinf <- auclast + clast / lam
  pct <- 100 * (aucinf - auclast) / aucinf
  subjects <- rbind(subjects, data.frame(
    SUBJID = sid, DOSE_MG = dose, CMAX = max(c), TMAX = t[which.max(c)],
    TLAST = tail(t, 1), CLAST = clast, AUCLAST = auclast, LAMBDA_Z = lam,
    LZ_N = lz$n, LZ_TSTART = lz$tstart, LZ_ADJR2 = lz$adj, THALF = log(2) / lam,
    AUCINF = aucinf, AUC_PCTEXTRAP = pct, CLF = dose / aucinf, VZF = dose / (lam * aucinf),
    FLAG = ifelse(pct > 20, "Y", "N")))
}

params <- c("CMAX", "TMAX", "AUCLAST", "LAMBDA_Z", "THALF", "AUCINF", "CLF", "VZF")
summ <- NULL
for (p in params) {
  x <- subjects[[p]]
  if (p %in% c("AUCINF", "CLF", "VZF")) x <- x[subjects$FLAG == "N"]
  geo <- if (p == "TMAX") c(NA, NA) else c(exp(mean(log(x))), 100 * sqrt(exp(sd(log(x))^2) - 1))
  summ <- rbind(summ, data.frame(PARAM = p, N = length(x), MEAN = mean(x), SD = sd(x),
                                 GEOMEAN = geo[1], GEOCV_PCT = geo[2], MEDIAN = median(x),
                                 MIN = min(x), MAX = max(x)))
}

fmt <- function(df) {
  for (k in names(df)) if (is.double(df[[k]])) df[[k]] <- ifelse(is.na(df[[k]]), "", sprintf("%.10g", df[[k]]))
  df
}
write.csv(fmt(subjects), file.path(outdir, "nca_subject.csv"), row.names = FALSE, quote = FALSE)
write.csv(fmt(summ), file.path(outdir, "nca_summary.csv"), row.names = FALSE, quote = FALSE)
