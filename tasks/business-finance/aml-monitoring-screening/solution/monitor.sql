-- Cleaned ledger: one row per txn_id, posted only, UTC epoch seconds, USD at the as-of rate.
CREATE TABLE raw AS SELECT DISTINCT * FROM read_csv('/task/inputs/transactions.csv', all_varchar = true);
CREATE TABLE fx AS SELECT currency, CAST(date AS DATE) AS day, CAST(usd_per_unit AS DOUBLE) AS rate
    FROM read_csv('/task/inputs/fx_rates.csv', all_varchar = true)
    UNION ALL SELECT 'USD', DATE '1900-01-01', 1.0;
CREATE TABLE posted AS
    SELECT txn_id, customer_id, txn_type, currency,
           CAST(amount AS DOUBLE) AS amount,
           epoch(CAST(timestamp AS TIMESTAMPTZ)) AS ts,
           upper(trim(counterparty_country)) AS ctry
    FROM raw WHERE status = 'POSTED';
CREATE TABLE ledger AS
    SELECT p.*, p.amount * fx.rate AS usd
    FROM (SELECT *, DATE '1970-01-01' + CAST(floor(ts / 86400) AS INTEGER) AS day FROM posted) p
    ASOF JOIN fx ON p.currency = fx.currency AND p.day >= fx.day;

CREATE TABLE candidates AS
    SELECT customer_id, txn_id, ts, usd FROM ledger
    WHERE txn_type = 'CASH_DEPOSIT' AND usd >= 3000 AND usd < 10000;

CREATE TABLE rapid AS
    SELECT i.customer_id, 'RAPID_MOVEMENT' AS scenario, i.txn_id AS trigger_txn_id,
           i.txn_id || ';' || string_agg(o.txn_id, ';' ORDER BY o.txn_id) AS txn_ids,
           i.usd AS total_usd
    FROM ledger i JOIN ledger o
      ON o.customer_id = i.customer_id AND o.txn_type = 'WIRE_OUT'
     AND o.ts > i.ts AND o.ts <= i.ts + 72 * 3600
    WHERE i.txn_type = 'WIRE_IN' AND i.usd >= 25000
    GROUP BY i.customer_id, i.txn_id, i.usd
    HAVING sum(o.usd) >= 0.8 * i.usd;

CREATE TABLE corridor AS
    SELECT customer_id, 'HIGH_RISK_CORRIDOR' AS scenario, txn_id AS trigger_txn_id,
           txn_id AS txn_ids, usd AS total_usd
    FROM ledger
    WHERE txn_type IN ('WIRE_IN', 'WIRE_OUT') AND usd >= 10000
      AND ctry IN (SELECT upper(trim(iso2)) FROM read_csv('/task/inputs/high_risk_countries.csv', all_varchar = true));

-- Screening: strip accents, lower case, letters only, titles out, tokens sorted.
CREATE MACRO norm(s) AS array_to_string(list_sort(list_filter(
    string_split_regex(trim(regexp_replace(lower(strip_accents(s)), '[^a-z]+', ' ', 'g')), ' '),
    t -> t NOT IN ('mr', 'mrs', 'ms', 'miss', 'dr', 'prof', 'sir', 'sheikh', 'hon', 'gen', 'col', ''))), ' ');
CREATE TABLE customers AS SELECT * FROM read_csv('/task/inputs/customers.csv', all_varchar = true);
CREATE TABLE listed AS
    SELECT entry_id, coalesce(date_of_birth, '') AS dob, nationality, norm(n) AS key
    FROM (SELECT *, unnest(list_concat([name], list_filter(string_split(coalesce(aliases, ''), ';'),
                                                            a -> trim(a) <> ''))) AS n
          FROM read_csv('/task/inputs/sanctions_list.csv', all_varchar = true));
CREATE TABLE hits AS
    SELECT c.customer_id, l.entry_id,
           round(max(jaro_winkler_similarity(norm(c.full_name), l.key)), 4) AS score,
           CASE WHEN any_value(l.dob) <> '' THEN
                     CASE WHEN length(any_value(l.dob)) = 4 THEN left(c.date_of_birth, 4) = any_value(l.dob)
                          ELSE c.date_of_birth = any_value(l.dob) END
                ELSE c.nationality = any_value(l.nationality) END AS confirmed
    FROM customers c CROSS JOIN listed l
    GROUP BY c.customer_id, c.full_name, c.date_of_birth, c.nationality, l.entry_id
    HAVING max(jaro_winkler_similarity(norm(c.full_name), l.key)) >= 0.92;
