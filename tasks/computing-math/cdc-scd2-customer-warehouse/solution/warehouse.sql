-- Staging: every CRM extract, CRM wall clock (America/Chicago) converted to UTC,
-- re-sent rows dropped on the commit sequence number.
CREATE OR REPLACE TEMP TABLE stg_customer AS
SELECT DISTINCT ON (customer_id, _lsn)
       op, customer_id, name, email, region, segment, _lsn::BIGINT AS lsn,
       timezone('UTC', timezone('America/Chicago', strptime(updated_at, '%Y-%m-%d %H:%M:%S'))) AS eff_utc
FROM read_csv('/task/inputs/crm/*.csv', header = true, all_varchar = true)
ORDER BY customer_id, _lsn;

-- One after-image per key and instant: the last commit wins.
CREATE OR REPLACE TEMP TABLE stg_effective AS
SELECT * FROM stg_customer
QUALIFY row_number() OVER (PARTITION BY customer_id, eff_utc ORDER BY lsn DESC) = 1;

CREATE OR REPLACE TEMP TABLE deletes AS
SELECT customer_id, min(eff_utc) AS deleted_at FROM stg_effective WHERE op = 'D' GROUP BY customer_id;

CREATE OR REPLACE TEMP TABLE changes AS
SELECT customer_id, region, segment, eff_utc,
       lag(region || '|' || segment) OVER w IS DISTINCT FROM (region || '|' || segment) AS opens
FROM stg_effective WHERE op <> 'D'
WINDOW w AS (PARTITION BY customer_id ORDER BY eff_utc, lsn);

CREATE OR REPLACE TEMP TABLE type1 AS
SELECT customer_id, arg_max(name, eff_utc) AS name, arg_max(email, eff_utc) AS email
FROM stg_effective WHERE op <> 'D' GROUP BY customer_id;

CREATE OR REPLACE TABLE dim_customer AS
WITH v AS (
    SELECT customer_id, region, segment, eff_utc AS valid_from,
           lead(eff_utc) OVER (PARTITION BY customer_id ORDER BY eff_utc) AS next_from
    FROM changes WHERE opens
)
SELECT row_number() OVER (ORDER BY v.customer_id, v.valid_from) AS customer_sk,
       v.customer_id, t.name, t.email, v.region, v.segment, v.valid_from,
       coalesce(v.next_from, d.deleted_at) AS valid_to,
       (v.next_from IS NULL AND d.deleted_at IS NULL) AS is_current
FROM v JOIN type1 t USING (customer_id) LEFT JOIN deletes d USING (customer_id)
ORDER BY customer_sk;

-- Orders: the export switched to integer minor units; re-deliveries dropped on order_id.
CREATE OR REPLACE TEMP TABLE stg_orders AS
SELECT DISTINCT ON (order_id)
       order_id, customer_id, product_id,
       timezone('UTC', order_ts::TIMESTAMPTZ) AS order_ts, quantity::INTEGER AS quantity,
       coalesce(unit_price::DECIMAL(12, 2), (unit_price_minor::INTEGER / 100)::DECIMAL(12, 2)) AS unit_price
FROM read_csv('/task/inputs/orders/*.csv', header = true, all_varchar = true, union_by_name = true)
ORDER BY order_id;

CREATE OR REPLACE TABLE fct_orders AS
SELECT o.order_id, d.customer_sk, o.customer_id, o.product_id, o.order_ts, o.quantity, o.unit_price,
       (o.quantity * o.unit_price)::DECIMAL(12, 2) AS revenue
FROM stg_orders o ASOF JOIN dim_customer d
  ON o.customer_id = d.customer_id AND o.order_ts >= d.valid_from
ORDER BY o.order_id;
