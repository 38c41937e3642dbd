# The SAP's DFS analyses on an analysis data frame with one row per ITT subject:
# ARMCD, dfs_d/dfs_e and os_d/os_e (days, 1 = event), AGE, MALE, OBSTRUCT, PERFOR, ADHERE,
# NODES, DIFFER, EXTGRP, SURGINT. Writes key<TAB>value lines and the forest table.
suppressPackageStartupMessages(library(survival))

analyse <- function(a, kvfile, forestfile) {
  kv <- character(0)
  put <- function(k, v) {
    v <- if (is.character(v)) v else if (is.na(v)) "NA" else sprintf("%.10g", v)
    kv <<- c(kv, paste0(k, "\t", v))
  }
  arms <- c("OBS", "LEV", "LEV5FU")
  a$ARMCD <- factor(a$ARMCD, levels = arms)
  a$DIFFER <- factor(a$DIFFER, levels = c("WELL", "MODERATE", "POOR"))
  a$dfs_m <- a$dfs_d / 30.4375
  a$os_m <- a$os_d / 30.4375
  a$NODES4 <- ifelse(is.na(a$NODES), NA, as.integer(a$NODES > 4))

  for (g in arms) {
    put(paste0("itt_n.", g), sum(a$ARMCD == g))
    put(paste0("dfs_events.", g), sum(a$dfs_e[a$ARMCD == g]))
  }

  km <- survfit(Surv(dfs_m, dfs_e) ~ ARMCD, data = a, conf.type = "log-log")
  tab <- summary(km, rmean = 60)$table
  s36 <- summary(km, times = 36)
  for (i in seq_along(arms)) {
    g <- arms[i]
    row <- tab[paste0("ARMCD=", g), ]
    put(paste0("dfs_km.", g, ".median"), row[["median"]])
    put(paste0("dfs_km.", g, ".median_lcl"), row[["0.95LCL"]])
    put(paste0("dfs_km.", g, ".median_ucl"), row[["0.95UCL"]])
    put(paste0("dfs_km.", g, ".surv_36"), s36$surv[i])
    put(paste0("dfs_km.", g, ".surv_36_lcl"), s36$lower[i])
    put(paste0("dfs_km.", g, ".surv_36_ucl"), s36$upper[i])
  }
  rm_obs <- tab["ARMCD=OBS", ]; rm_trt <- tab["ARMCD=LEV5FU", ]
  for (g in c("OBS", "LEV5FU")) {
    put(paste0("dfs_rmst_60.", g, ".rmst"), tab[paste0("ARMCD=", g), "rmean"])
    put(paste0("dfs_rmst_60.", g, ".se"), tab[paste0("ARMCD=", g), "se(rmean)"])
  }
  diff <- rm_trt[["rmean"]] - rm_obs[["rmean"]]
  se <- sqrt(rm_trt[["se(rmean)"]]^2 + rm_obs[["se(rmean)"]]^2)
  put("dfs_rmst_60.difference", diff)
  put("dfs_rmst_60.lcl", diff - qnorm(0.975) * se)
  put("dfs_rmst_60.ucl", diff + qnorm(0.975) * se)

  two <- a[a$ARMCD %in% c("OBS", "LEV5FU"), ]
  two$ARMCD <- droplevels(two$ARMCD)
  lr <- survdiff(Surv(dfs_m, dfs_e) ~ ARMCD + strata(EXTGRP, SURGINT), data = two)
  put("dfs_logrank_stratified.chisq", lr$chisq)
  put("dfs_logrank_stratified.p", pchisq(lr$chisq, 1, lower.tail = FALSE))

  covs <- c(age = "AGE", sex = "MALE", obstruct = "OBSTRUCT", perfor = "PERFOR",
            adhere = "ADHERE", nodes4 = "NODES4", differ = "DIFFER")
  fit_arm <- function(terms, strata, key) {
    f <- as.formula(paste("Surv(dfs_m, dfs_e) ~ ARMCD +", paste(terms, collapse = " + "),
                          "+ strata(", paste(strata, collapse = ", "), ")"))
    cx <- coxph(f, data = a, ties = "breslow")
    ci <- exp(confint(cx))
    co <- summary(cx)$coefficients
    for (g in c("LEV", "LEV5FU")) {
      term <- paste0("ARMCD", g)
      put(paste0(key, ".hr.", g), exp(coef(cx)[[term]]))
      put(paste0(key, ".lcl.", g), ci[term, 1])
      put(paste0(key, ".ucl.", g), ci[term, 2])
      put(paste0(key, ".p.", g), co[term, "Pr(>|z|)"])
    }
    cx
  }
  cx <- fit_arm(covs, c("EXTGRP", "SURGINT"), "dfs_cox_adjusted")
  put("dfs_cox_adjusted.n", cx$n)
  put("dfs_cox_adjusted.events", cx$nevent)

  z <- cox.zph(cx)$table
  rownames(z)[rownames(z) == "ARMCD"] <- "arm"
  for (nm in names(covs)) rownames(z)[rownames(z) == covs[[nm]]] <- nm
  put("ph_test.global_p", z["GLOBAL", "p"])
  put("ph_test.arm_p", z["arm", "p"])
  viol <- names(covs)[names(covs) %in% rownames(z)[z[, "p"] < 0.05]]
  put("ph_test.violating", paste(viol, collapse = ","))

  fit_arm(covs[!names(covs) %in% viol], c("EXTGRP", "SURGINT", covs[viol]), "dfs_cox_sensitivity")
  put("dfs_cox_sensitivity.strata_added", paste(viol, collapse = ","))

  os <- coxph(Surv(os_m, os_e) ~ ARMCD + strata(EXTGRP, SURGINT), data = a, ties = "breslow")
  oci <- exp(confint(os))
  for (g in arms) put(paste0("os.events.", g), sum(a$os_e[a$ARMCD == g]))
  for (g in c("LEV", "LEV5FU")) {
    term <- paste0("ARMCD", g)
    put(paste0("os.hr.", g), exp(coef(os)[[term]]))
    put(paste0("os.lcl.", g), oci[term, 1])
    put(paste0("os.ucl.", g), oci[term, 2])
  }

  two$AGEGRP <- ifelse(two$AGE < 65, "<65", ">=65")
  two$SEXGRP <- ifelse(two$MALE == 1, "Male", "Female")
  two$NODEGRP <- ifelse(is.na(two$NODES), NA, ifelse(two$NODES > 4, ">4", "0-4"))
  two$OBSGRP <- ifelse(two$OBSTRUCT == 1, "Yes", "No")
  groups <- list(ALL = NULL, SEX = c("SEXGRP", "Male", "Female"), AGE = c("AGEGRP", "<65", ">=65"),
                 NODES = c("NODEGRP", "0-4", ">4"), OBSTRUCT = c("OBSGRP", "Yes", "No"))
  rows <- NULL
  one <- function(d, sg, lvl, pint) {
    cx <- coxph(Surv(dfs_m, dfs_e) ~ ARMCD, data = d, ties = "breslow")
    ci <- exp(confint(cx))
    data.frame(SUBGROUP = sg, LEVEL = lvl, N = nrow(d), EVENTS = sum(d$dfs_e),
               HR = sprintf("%.10g", exp(coef(cx))[[1]]), LCL = sprintf("%.10g", ci[1, 1]),
               UCL = sprintf("%.10g", ci[1, 2]), P_INTERACTION = pint)
  }
  for (sg in names(groups)) {
    if (sg == "ALL") { rows <- rbind(rows, one(two, "ALL", "All", "")); next }
    v <- groups[[sg]][1]
    d <- two[!is.na(two[[v]]), ]
    d$G <- factor(d[[v]])
    m0 <- coxph(Surv(dfs_m, dfs_e) ~ ARMCD + G, data = d, ties = "breslow")
    m1 <- coxph(Surv(dfs_m, dfs_e) ~ ARMCD * G, data = d, ties = "breslow")
    lrt <- 2 * (m1$loglik[2] - m0$loglik[2])
    pint <- sprintf("%.10g", pchisq(lrt, 1, lower.tail = FALSE))
    for (lvl in groups[[sg]][-1]) rows <- rbind(rows, one(d[d[[v]] == lvl, ], sg, lvl, pint))
  }
  writeLines(kv, kvfile)
  write.csv(rows, forestfile, row.names = FALSE, quote = FALSE)
}
