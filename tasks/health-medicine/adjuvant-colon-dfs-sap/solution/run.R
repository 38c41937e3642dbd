# Derives the DFS/OS analysis data set from ADSL/ADTTE per the SAP, then runs the analyses.
args <- commandArgs(trailingOnly = TRUE)
here <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
source(file.path(here, "analysis.R"))
adsl <- read.csv(args[1], colClasses = "character")
adtte <- read.csv(args[2], colClasses = "character")
adsl <- adsl[adsl$ITTFL == "Y", ]

param <- function(p) {
  x <- adtte[adtte$PARAMCD == p, ]
  x$d <- as.numeric(as.Date(x$ADT) - as.Date(x$STARTDT)) + 1      # SAP: ADT - STARTDT + 1
  x$e <- 1L - as.integer(x$CNSR)                                  # CNSR = 1 is censored
  x[match(adsl$USUBJID, x$USUBJID), ]
}
ttr <- param("TTR"); os <- param("OS")
stopifnot(!anyNA(ttr$d), !anyNA(os$d))

a <- data.frame(
  ARMCD = adsl$ARMCD,
  dfs_e = pmax(ttr$e, os$e),
  dfs_d = ifelse(ttr$e == 1, ttr$d, ifelse(os$e == 1, os$d, ttr$d)),
  os_d = os$d, os_e = os$e,
  AGE = as.numeric(adsl$AGE), MALE = as.integer(adsl$SEX == "M"),
  OBSTRUCT = as.integer(adsl$OBSTRUCT == "Y"), PERFOR = as.integer(adsl$PERFOR == "Y"),
  ADHERE = as.integer(adsl$ADHERE == "Y"),
  NODES = suppressWarnings(as.numeric(adsl$NODES)),
  DIFFER = ifelse(adsl$DIFFER == "", NA, adsl$DIFFER),
  EXTGRP = ifelse(adsl$EXTENT %in% c("SUBMUCOSA", "MUSCLE"), "SUBMUCOSA/MUSCLE", adsl$EXTENT),
  SURGINT = adsl$SURGINT)
analyse(a, args[3], args[4])
