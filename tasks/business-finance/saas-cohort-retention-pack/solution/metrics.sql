-- Recognised MRR per account and local calendar month, in DuckDB.
CREATE OR REPLACE TEMP TABLE acct AS
SELECT account_id, timezone FROM read_csv('/task/inputs/accounts.csv', header = true, all_varchar = true)
WHERE lower(billing_email) NOT LIKE '%@tallyloop.io';   -- internal test accounts

CREATE OR REPLACE TEMP TABLE paid AS
SELECT l.account_id, l.amount_usd::DOUBLE AS amount,
       date_trunc('month', timezone(a.timezone, l.period_start::TIMESTAMPTZ))::DATE AS m0,
       date_diff('month', date_trunc('month', timezone(a.timezone, l.period_start::TIMESTAMPTZ)),
                 date_trunc('month', timezone(a.timezone, l.period_end::TIMESTAMPTZ))) AS n_months
FROM read_csv('/task/inputs/invoice_lines.csv', header = true, all_varchar = true) l
JOIN acct a USING (account_id)
WHERE l.line_type = 'subscription' AND l.amount_usd::DOUBLE > 0
  AND l.invoice_id NOT IN (SELECT invoice_id FROM read_csv('/task/inputs/refunds.csv', header = true, all_varchar = true));

CREATE OR REPLACE TEMP TABLE mrr AS
SELECT account_id, (m0 + to_months(k))::DATE AS month, sum(amount / n_months) AS mrr
FROM paid, range(0, 12) r(k)
WHERE k < n_months AND (m0 + to_months(k))::DATE <= DATE '2025-06-01'
GROUP BY ALL HAVING sum(amount / n_months) > 0;

CREATE OR REPLACE TEMP TABLE cohort AS
SELECT account_id, min(month) AS cohort FROM mrr GROUP BY account_id;

CREATE OR REPLACE TEMP TABLE cells AS
WITH sizes AS (SELECT cohort, count(*) AS n FROM cohort GROUP BY cohort),
grid AS (
  SELECT s.cohort, k AS month_offset, (s.cohort + to_months(k))::DATE AS month, s.n
  FROM sizes s, range(0, 30) r(k) WHERE (s.cohort + to_months(k))::DATE <= DATE '2025-06-01'
)
SELECT strftime(g.cohort, '%Y-%m') AS cohort_month, g.month_offset, g.n AS cohort_accounts,
       count(m.account_id) AS active_accounts, coalesce(sum(m.mrr), 0) AS mrr
FROM grid g LEFT JOIN cohort c ON c.cohort = g.cohort
LEFT JOIN mrr m ON m.account_id = c.account_id AND m.month = g.month
GROUP BY ALL;
