-- atlas2kudu projection tables as PostgreSQL foreign tables, for FDW consumers (read only).
--
-- Matches sql/kudu_projections.sql (--key-encoding hex): KEY columns are text holding 32 lowercase
-- hex characters. With --key-encoding binary declare them bytea and pass bytea[] parameters.
-- The contract allows FDW reads only: writers are the atlas2kudu outbox worker (Impala HS2 UPSERT
-- and DELETE) or a native Kudu client, never INSERT/UPDATE/DELETE through these tables.
--
-- The server definition depends on the FDW in use (an Impala ODBC/JDBC FDW or a Kudu FDW); adjust
-- `OPTIONS` to it. Every table is read through its Impala name `atlas`.`<table>`.

CREATE SCHEMA IF NOT EXISTS atlas_kudu;

-- CREATE SERVER atlas_kudu FOREIGN DATA WRAPPER <fdw> OPTIONS (...);
-- CREATE USER MAPPING FOR CURRENT_USER SERVER atlas_kudu OPTIONS (...);

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.entity_flat (
  guid           text NOT NULL,
  type_name      text,
  qualified_name text,
  name           text,
  state          text,
  created_ts     bigint,
  updated_ts     bigint,
  props_json     text
) SERVER atlas_kudu OPTIONS (table_name 'atlas.entity_flat');

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.entity_by_qn (
  qn_digest text NOT NULL,
  guid      text,
  type_name text
) SERVER atlas_kudu OPTIONS (table_name 'atlas.entity_by_qn');

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.edge_out (
  src      text NOT NULL,
  elabel   text NOT NULL,
  dst      text NOT NULL,
  dst_type text
) SERVER atlas_kudu OPTIONS (table_name 'atlas.edge_out');

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.edge_in (
  dst      text NOT NULL,
  elabel   text NOT NULL,
  src      text NOT NULL,
  src_type text
) SERVER atlas_kudu OPTIONS (table_name 'atlas.edge_in');

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.entity_classifications (
  tag_name    text NOT NULL,
  guid        text NOT NULL,
  propagated  boolean,
  source_guid text,
  attrs_json  text,
  updated_ts  bigint
) SERVER atlas_kudu OPTIONS (table_name 'atlas.entity_classifications');

CREATE FOREIGN TABLE IF NOT EXISTS atlas_kudu.entity_audit (
  guid           text NOT NULL,
  event_ts       bigint NOT NULL,
  seq            bigint NOT NULL,
  op             text,
  type_name      text,
  qualified_name text,
  detail_json    text
) SERVER atlas_kudu OPTIONS (table_name 'atlas.entity_audit');

-- Traversal: a frontier loop, one pushed-down IN-list scan per hop. Never a recursive CTE over
-- foreign tables: the planner cannot push a recursive join down and would pull whole tables.
-- `src = ANY($1)` becomes `src IN (...)` on the leading key of edge_out, which Kudu prunes to the
-- matching tablets (with binary keys: src = ANY($1::bytea[])).
--
--   -- $1: text[] of start guids, $2: max depth
--   CREATE FUNCTION atlas_kudu.downstream(start text[], max_depth int)
--   RETURNS TABLE (depth int, src text, elabel text, dst text) LANGUAGE plpgsql AS $$
--   DECLARE
--     frontier text[] := start;
--     seen     text[] := start;
--     d        int := 0;
--   BEGIN
--     WHILE d < max_depth AND cardinality(frontier) > 0 LOOP
--       d := d + 1;
--       RETURN QUERY
--         SELECT d, e.src, e.elabel, e.dst FROM atlas_kudu.edge_out e WHERE e.src = ANY(frontier);
--       SELECT coalesce(array_agg(DISTINCT e.dst), '{}') INTO frontier
--         FROM atlas_kudu.edge_out e
--        WHERE e.src = ANY(frontier) AND NOT (e.dst = ANY(seen));
--       seen := seen || frontier;
--     END LOOP;
--   END $$;
--
-- Upstream traversal is the same loop over atlas_kudu.edge_in with `dst = ANY(frontier)`.
