-- atlas2kudu graph reads over the FDW foreign tables: lineage and neighbourhood traversals, entity
-- lookup by (type_name, qualified_name), entities by tag. PL/pgSQL, tested on PostgreSQL 15.
--
-- Load it after the foreign tables (either key encoding; the functions read the key type from the
-- catalog, so this one file serves both):
--
--   psql -d app -v fdw=postgres_fdw -v server_options="..." -v user_options="..." \
--        -f sql/kudu_projections_fdw.sql            # or kudu_projections_fdw_binary.sql
--   psql -d app -f sql/atlas_traversal.sql
--
-- Worked examples (hex keys; with binary keys the keys are bytea, e.g. '\x0b6f...'::bytea):
--
--   -- the entity behind a qualifiedName (entity_by_qn, digest computed here)
--   SELECT guid, state FROM atlas_kudu.entity_by_qn('hive_table', 'sales.orders@cl1');
--
--   -- its lineage downstream, five hops deep: the processes that read it, what they write, ...
--   SELECT * FROM atlas_kudu.lineage(
--            ARRAY(SELECT guid FROM atlas_kudu.entity_by_qn('hive_table', 'sales.orders@cl1')),
--            'downstream', 5);
--                 guid               | depth |              parent              |      elabel
--  ----------------------------------+-------+----------------------------------+------------------
--   0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c |     0 |                                  |
--   5d2a9e7011c34f0e8a6b2c4d6e8f0a12 |     1 | 0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c | __Process.inputs
--   7c40d1b2e3f44a5b8c6d7e8f9a0b1c2d |     2 | 5d2a9e7011c34f0e8a6b2c4d6e8f0a12 | __Process.outputs
--   ...
--
--   -- everything its edges lead to as stored (src -> dst), five hops deep
--   SELECT * FROM atlas_kudu.traverse(ARRAY['0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'], 'out', 5);
--
--   -- one hop both ways, following two labels and only towards hive_table entities
--   SELECT * FROM atlas_kudu.traverse(ARRAY['0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'], 'both', 1,
--                                     labels => ARRAY['__Process.inputs', '__Process.outputs'],
--                                     entity_types => ARRAY['hive_table']);
--
--   -- upstream, three hops, leaving out deleted entities (soft or hard tombstones)
--   SELECT * FROM atlas_kudu.traverse(ARRAY['0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'], 'in', 3,
--                                     active_only => true);
--
--   -- the rows of the entities a traversal reached (one pushed-down lookup)
--   SELECT f.qualified_name, f.state
--     FROM atlas_kudu.entities(ARRAY(SELECT guid FROM atlas_kudu.traverse(
--              ARRAY['0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'], 'in', 3))) f;
--
--   -- entities tagged PII, directly (not propagated)
--   SELECT guid FROM atlas_kudu.entities_by_tag('PII', include_propagated => false);
--
-- How a traversal runs. A frontier loop: the start keys are the frontier; each hop is ONE query on
-- the edge table whose leading key is the frontier's side (edge_out for 'out': src -> dst,
-- edge_in for 'in': dst -> src, both for 'both'):
--
--   SELECT e.dst, e.src, e.elabel FROM atlas_kudu.edge_out e WHERE e.src = ANY($1) [AND ...]
--
-- src leads edge_out's primary key and is its hash-partition column (dst for edge_in), so Kudu
-- answers the hop's `src IN (...)` by key, not by a scan: one remote query per edge table a hop
-- reads (two for 'both' and lineage(), and one on entity_flat more with active_only). Keys already
-- visited are dropped, so cycles end; the rest are the next frontier. Never a recursive CTE over
-- foreign tables: no wrapper ships the recursion, so its recursive part runs here and reads the
-- edge tables whole or queries them once per row.
--
-- The queries run through EXECUTE ... USING, so each is planned with its values as constants:
-- every wrapper that pushes `column = ANY(constant array)` down (postgres_fdw, and jdbc_fdw and
-- odbc_fdw as an IN list) sends the hop to the remote side, also those that never send query
-- parameters. To see it, log the plans of the nested statements (LOAD needs a superuser; a
-- reader role can have auto_explain in session_preload_libraries set for it instead):
--
--   LOAD 'auto_explain';
--   SET auto_explain.log_min_duration = 0;
--   SET auto_explain.log_nested_statements = on;
--   SET auto_explain.log_verbose = on;
--   SET auto_explain.log_level = notice;
--   SELECT count(*) FROM atlas_kudu.traverse(ARRAY['0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c'], 'out', 2);
--   -- NOTICE: ... Foreign Scan on atlas_kudu.edge_out e
--   --   Remote SQL: SELECT src, elabel, dst FROM atlas.edge_out
--   --               WHERE ((src = ANY ('{0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c}'::text[])))
--
-- or EXPLAIN one hop by hand (a prepared statement shows the array as a parameter):
--
--   PREPARE hop(text[]) AS SELECT dst FROM atlas_kudu.edge_out WHERE src = ANY($1);
--   SET plan_cache_mode = force_generic_plan;
--   EXPLAIN (VERBOSE, COSTS OFF) EXECUTE hop('{0b6f3c1e2a4d4e8f9c1b5d7e8f9a0b1c}');
--   --   Remote SQL: SELECT dst FROM atlas.edge_out WHERE ((src = ANY ($1::text[])))
--
-- Functions, all in schema atlas_kudu:
--   key_type()                                  regtype of the KEY columns: text or bytea
--   qn_digest(type_name, qualified_name)        bytea: first 16 bytes of SHA-256(type_name ||
--                                               0x1F || qualified_name), UTF-8
--   qn_digest_hex(type_name, qualified_name)    text: the same in 32 lowercase hex characters
--   entity_by_qn(type_name, qualified_name)     SETOF entity_flat: the entity with that current
--                                               type and qualifiedName (none or one row)
--   entities(keys)                              SETOF entity_flat: rows of these guids
--   entities_by_tag(tag_name, include_propagated)  SETOF entity_classifications of that tag
--   traverse(start, direction, max_depth, labels, entity_types, max_frontier, active_only,
--            in_labels)                         TABLE (guid, depth, parent, elabel)
--   lineage(start, direction, max_depth, max_frontier, active_only)
--                                               TABLE (guid, depth, parent, elabel)

\set ON_ERROR_STOP on

BEGIN;

-- The KEY column type the foreign tables were created with, read from the catalog so that one
-- set of functions serves both key encodings.
CREATE OR REPLACE FUNCTION atlas_kudu.key_type() RETURNS regtype
LANGUAGE sql STABLE AS $fn$
  SELECT a.atttypid::regtype
    FROM pg_catalog.pg_attribute a
   WHERE a.attrelid = 'atlas_kudu.edge_out'::regclass AND a.attname = 'src'
$fn$;

-- The entity_by_qn key. convert_to gives the UTF-8 bytes whatever the database encoding; the
-- separator is the single byte 0x1F.
CREATE OR REPLACE FUNCTION atlas_kudu.qn_digest(type_name text, qualified_name text)
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT substring(sha256(convert_to(type_name, 'UTF8') || decode('1f', 'hex')
                          || convert_to(qualified_name, 'UTF8')) FROM 1 FOR 16)
$fn$;

CREATE OR REPLACE FUNCTION atlas_kudu.qn_digest_hex(type_name text, qualified_name text)
RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
  SELECT encode(atlas_kudu.qn_digest(type_name, qualified_name), 'hex')
$fn$;

-- The rows of the given guids: one pushed-down `guid = ANY(...)` on entity_flat's key. `keys` is
-- text[] (hex) or bytea[] (binary), as key_type() says.
CREATE OR REPLACE FUNCTION atlas_kudu.entities(keys anyarray)
RETURNS SETOF atlas_kudu.entity_flat LANGUAGE plpgsql STABLE STRICT AS $fn$
BEGIN
  RETURN QUERY EXECUTE 'SELECT f.* FROM atlas_kudu.entity_flat f WHERE f.guid = ANY($1)'
    USING keys;
END
$fn$;

-- The entity whose current type and qualifiedName are these: the guid from entity_by_qn (its key
-- is the digest), then that guid's row from entity_flat. Only keys travel to the remote side; the
-- names are compared here, so a wrapper never has to quote them, and a row that no longer carries
-- that name (a by_qn row written before a rename) is not returned.
CREATE OR REPLACE FUNCTION atlas_kudu.entity_by_qn(type_name text, qualified_name text)
RETURNS SETOF atlas_kudu.entity_flat LANGUAGE plpgsql STABLE STRICT AS $fn$
DECLARE
  digest bytea := atlas_kudu.qn_digest(type_name, qualified_name);
  by_qn  text := 'SELECT ARRAY(SELECT q.guid FROM atlas_kudu.entity_by_qn q '
                 'WHERE q.qn_digest = $1)';
  hex_guids text[];
  bin_guids bytea[];
BEGIN
  IF atlas_kudu.key_type() = 'bytea'::regtype THEN
    EXECUTE by_qn INTO bin_guids USING digest;
    RETURN QUERY SELECT f.* FROM atlas_kudu.entities(bin_guids) f
                  WHERE f.type_name = entity_by_qn.type_name
                    AND f.qualified_name = entity_by_qn.qualified_name;
  ELSE
    EXECUTE by_qn INTO hex_guids USING encode(digest, 'hex');
    RETURN QUERY SELECT f.* FROM atlas_kudu.entities(hex_guids) f
                  WHERE f.type_name = entity_by_qn.type_name
                    AND f.qualified_name = entity_by_qn.qualified_name;
  END IF;
END
$fn$;

-- The classification rows of one tag: `tag_name = $1` on entity_classifications' leading key.
-- include_propagated => false keeps the tags attached to the entity itself (propagated = false).
-- There is no lookup by guid: the table is keyed by tag first, so that would read it whole.
CREATE OR REPLACE FUNCTION atlas_kudu.entities_by_tag(tag_name text,
                                                      include_propagated boolean DEFAULT true)
RETURNS SETOF atlas_kudu.entity_classifications LANGUAGE plpgsql STABLE STRICT AS $fn$
BEGIN
  RETURN QUERY EXECUTE
    'SELECT c.* FROM atlas_kudu.entity_classifications c WHERE c.tag_name = $1'
    || CASE WHEN include_propagated THEN '' ELSE ' AND NOT c.propagated' END
    USING tag_name;
END
$fn$;

-- Breadth-first traversal from `start` (text[] of hex keys or bytea[], as key_type() says).
--
--   direction     'out' follows edge_out (src -> dst), 'in' follows edge_in (dst -> src), 'both'
--                 both in each hop
--   max_depth     hops at most (0: only the start keys)
--   labels        follow only edges with these labels (NULL: all)
--   in_labels     follow only edge_in rows with these labels ('in' or 'both'; labels then
--                 applies to edge_out alone; NULL: labels for both); lineage() is built on it
--   entity_types  follow only edges whose far end has one of these types, as the edge records it
--                 (edge_out.dst_type, edge_in.src_type; NULL: all). It prunes the walk: entities of
--                 other types are neither returned nor walked through. To filter only the output,
--                 join the result with entities().
--   max_frontier  the most keys one hop may add; more raise program_limit_exceeded (54000)
--                 before the next hop runs, rather than sending an unbounded IN list (with
--                 active_only, inactive keys count too: they are known only once looked up)
--   active_only   walk only entities whose entity_flat row is ACTIVE: soft-deleted entities,
--                 hard-deleted ones and guids never created are neither returned nor walked
--                 through. Costs one more pushed-down query per hop (entity_flat, guid = ANY).
--                 The start keys are returned as given.
--
-- Returns each entity reached once, at its shortest distance: the start keys at depth 0 (parent
-- and elabel NULL), then per hop the new keys with the edge that reached them (parent is the key
-- one hop closer to the start). When several edges reach a key in the same hop the first by
-- (parent, elabel) in byte order is given, so results are deterministic. Edges are followed as
-- stored: deleting an entity deletes its edges in both tables, so without active_only a deleted
-- entity is reached only through an edge written after its delete.
-- An earlier file's traverse, without in_labels: two would make calls ambiguous.
DROP FUNCTION IF EXISTS atlas_kudu.traverse(anyarray, text, integer, text[], text[], integer,
                                            boolean);
CREATE OR REPLACE FUNCTION atlas_kudu.traverse(start anyarray,
                                               direction text DEFAULT 'out',
                                               max_depth integer DEFAULT 3,
                                               labels text[] DEFAULT NULL,
                                               entity_types text[] DEFAULT NULL,
                                               max_frontier integer DEFAULT 10000,
                                               active_only boolean DEFAULT false,
                                               in_labels text[] DEFAULT NULL)
RETURNS TABLE (guid anyelement, depth integer, parent anyelement, elabel text)
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
  key_type   regtype := atlas_kudu.key_type();
  frontier   start%TYPE;
  visited    start%TYPE;
  new_keys   start%TYPE;
  new_parents start%TYPE;
  new_labels text[];
  active     start%TYPE;
  hop_out    text;
  hop_in     text;
  hop        text;
  -- Text keys are ordered and compared bytewise whatever the database collation.
  by_key     text;
  d          integer := 0;
BEGIN
  IF pg_typeof(start) IS DISTINCT FROM
     (SELECT t.typarray::regtype FROM pg_catalog.pg_type t WHERE t.oid = key_type) THEN
    RAISE EXCEPTION 'atlas_kudu.traverse: start is %, but the foreign tables hold % keys',
                    pg_typeof(start), key_type
      USING ERRCODE = 'datatype_mismatch',
            HINT = CASE WHEN key_type = 'bytea'::regtype
                        THEN 'Pass bytea[] of 16-byte keys, e.g. ARRAY[decode(''0b6f...'', '
                             '''hex'')] (a hex text cast to bytea would be its 32 characters).'
                        ELSE 'Pass text[] of keys in 32 lowercase hex characters, e.g. '
                             'ARRAY[''0b6f...''] (an Atlas guid without its dashes).' END;
  END IF;
  IF direction IS NULL OR direction NOT IN ('out', 'in', 'both') THEN
    RAISE EXCEPTION 'atlas_kudu.traverse: direction must be out, in or both, not %',
                    coalesce(quote_literal(direction), 'NULL')
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  IF max_depth IS NULL OR max_depth < 0 OR max_frontier IS NULL OR max_frontier < 1
     OR active_only IS NULL THEN
    RAISE EXCEPTION 'atlas_kudu.traverse: max_depth must be >= 0, max_frontier >= 1, '
                    'active_only true or false'
      USING ERRCODE = 'invalid_parameter_value';
  END IF;

  frontier := ARRAY(SELECT DISTINCT s.k FROM unnest(start) AS s(k) WHERE s.k IS NOT NULL);
  IF cardinality(frontier) > max_frontier THEN
    RAISE EXCEPTION 'atlas_kudu.traverse: % start keys, more than max_frontier (%)',
                    cardinality(frontier), max_frontier
      USING ERRCODE = 'program_limit_exceeded';
  END IF;
  visited := frontier;
  -- nullif(k, k): a NULL of the key type, whichever it is.
  RETURN QUERY SELECT s.k, 0, nullif(s.k, s.k), NULL::text FROM unnest(frontier) AS s(k);

  -- The hop: $1 frontier, $2 labels (edge_in's: $5), $3 entity types. Only the conditions asked for are written,
  -- so the remote side gets a plain conjunction on the key and, maybe, the label and the type.
  hop_out := 'SELECT e.dst AS k, e.src AS p, e.elabel AS l FROM atlas_kudu.edge_out e '
             'WHERE e.src = ANY($1)'
             || CASE WHEN labels IS NULL THEN '' ELSE ' AND e.elabel = ANY($2)' END
             || CASE WHEN entity_types IS NULL THEN '' ELSE ' AND e.dst_type = ANY($3)' END;
  hop_in := 'SELECT e.src AS k, e.dst AS p, e.elabel AS l FROM atlas_kudu.edge_in e '
            'WHERE e.dst = ANY($1)'
            || CASE WHEN coalesce(in_labels, labels) IS NULL THEN ''
                    ELSE ' AND e.elabel = ANY($5)' END
            || CASE WHEN entity_types IS NULL THEN '' ELSE ' AND e.src_type = ANY($3)' END;
  hop := CASE direction WHEN 'out' THEN hop_out
                        WHEN 'in' THEN hop_in
                        ELSE hop_out || ' UNION ALL ' || hop_in END;
  by_key := CASE WHEN key_type = 'text'::regtype THEN ' COLLATE "C"' ELSE '' END;

  -- One statement per hop: the hop's rows, less the visited keys ($4), one row per new key (the
  -- first parent and label), gathered into three parallel arrays. OFFSET 0 keeps the visited
  -- filter here instead of letting the planner push `<> ALL($4)` into the remote query, which
  -- would send every visited key with every hop.
  hop := format(
    'SELECT coalesce(array_agg(n.k ORDER BY n.k%1$s), ''{}''), '
    '       coalesce(array_agg(n.p ORDER BY n.k%1$s), ''{}''), '
    '       coalesce(array_agg(n.l ORDER BY n.k%1$s), ''{}'') '
    '  FROM (SELECT DISTINCT ON (h.k%1$s) h.k, h.p, h.l '
    '          FROM (%2$s OFFSET 0) AS h '
    '         WHERE h.k <> ALL($4) '
    '         ORDER BY h.k%1$s, h.p%1$s, h.l COLLATE "C") AS n',
    by_key, hop);

  WHILE d < max_depth AND cardinality(frontier) > 0 LOOP
    d := d + 1;
    EXECUTE hop INTO new_keys, new_parents, new_labels
      USING frontier, labels, entity_types, visited, coalesce(in_labels, labels);
    IF cardinality(new_keys) > max_frontier THEN
      RAISE EXCEPTION 'atlas_kudu.traverse: hop % reached % new keys, more than max_frontier (%)',
                      d, cardinality(new_keys), max_frontier
        USING ERRCODE = 'program_limit_exceeded',
              HINT = 'Lower max_depth, filter by labels or entity_types, or raise max_frontier.';
    END IF;
    -- Inactive keys count as visited too, so no later hop looks them up again.
    visited := visited || new_keys;
    IF active_only AND cardinality(new_keys) > 0 THEN
      EXECUTE 'SELECT ARRAY(SELECT f.guid FROM atlas_kudu.entity_flat f '
              'WHERE f.guid = ANY($1) AND f.state = ''ACTIVE'')'
        INTO active USING new_keys;
      SELECT coalesce(array_agg(u.k), '{}'), coalesce(array_agg(u.p), '{}'),
             coalesce(array_agg(u.l), '{}')
        INTO new_keys, new_parents, new_labels
        FROM unnest(new_keys, new_parents, new_labels) AS u(k, p, l)
       WHERE u.k = ANY(active);
    END IF;
    RETURN QUERY SELECT u.k, d, u.p, u.l
                   FROM unnest(new_keys, new_parents, new_labels) AS u(k, p, l);
    frontier := new_keys;
  END LOOP;
END
$fn$;

-- Atlas lineage from `start`: 'downstream' (what is made from it) or 'upstream' (what it is made
-- from), as traverse() returns it. Atlas relates a process to the datasets it reads
-- (dataset_process_inputs) and writes (process_dataset_outputs) with the process as end1 both
-- times, so both edges are stored process -> dataset (src -> dst), labels __Process.inputs and
-- __Process.outputs. Downstream of a dataset are the processes that read it (edge_in, label
-- __Process.inputs), then the datasets they write (edge_out, __Process.outputs), and so on;
-- upstream, the processes that write it (edge_in, __Process.outputs), then what they read (edge_out,
-- __Process.inputs). Each hop follows both, as traverse(..., 'both', labels, in_labels) does: a
-- dataset has no edge_out rows with these labels, a process no edge_in rows. Processes count as
-- hops: a dataset two processes away is at depth 4.
CREATE OR REPLACE FUNCTION atlas_kudu.lineage(start anyarray,
                                              direction text DEFAULT 'downstream',
                                              max_depth integer DEFAULT 6,
                                              max_frontier integer DEFAULT 10000,
                                              active_only boolean DEFAULT false)
RETURNS TABLE (guid anyelement, depth integer, parent anyelement, elabel text)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
  IF direction IS NULL OR direction NOT IN ('downstream', 'upstream') THEN
    RAISE EXCEPTION 'atlas_kudu.lineage: direction must be downstream or upstream, not %',
                    coalesce(quote_literal(direction), 'NULL')
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  RETURN QUERY SELECT * FROM atlas_kudu.traverse(
    start, 'both', max_depth,
    labels => CASE direction WHEN 'downstream' THEN ARRAY['__Process.outputs']
                             ELSE ARRAY['__Process.inputs'] END,
    max_frontier => max_frontier, active_only => active_only,
    in_labels => CASE direction WHEN 'downstream' THEN ARRAY['__Process.inputs']
                                ELSE ARRAY['__Process.outputs'] END);
END
$fn$;

COMMIT;
