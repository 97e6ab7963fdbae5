
-- ---- The scipis index access method: ranked search over text columns ----

CREATE TYPE scipisquery;

CREATE FUNCTION scipisquery_in(cstring) RETURNS scipisquery
    AS 'MODULE_PATHNAME', 'scipisquery_in' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION scipisquery_out(scipisquery) RETURNS cstring
    AS 'MODULE_PATHNAME', 'scipisquery_out' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE scipisquery (
    INPUT = scipisquery_in,
    OUTPUT = scipisquery_out,
    INTERNALLENGTH = VARIABLE,
    STORAGE = extended
);
COMMENT ON TYPE scipisquery IS 'A scipis query: its text, ranking (tfidf or bm25), match (any or all) and, optionally, the index whose tokenizer and statistics it uses';

-- IMMUTABLE so that the planner folds it to a constant (which binds to an
-- index and which index scans take); the index is kept by OID.
CREATE FUNCTION scipis_query(query text, ranking text DEFAULT 'tfidf', match text DEFAULT 'any',
                             index regclass DEFAULT NULL)
    RETURNS scipisquery
    AS 'MODULE_PATHNAME', 'scipis_query_make' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION scipis_query(text, text, text, regclass) IS
    'A query for the @@@ and <@> operators; name the index for sequential scans';

CREATE FUNCTION scipis_text_to_query(text) RETURNS scipisquery
    AS 'MODULE_PATHNAME', 'scipis_query_from_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (text AS scipisquery) WITH FUNCTION scipis_text_to_query(text) AS IMPLICIT;

CREATE FUNCTION scipis_query_on(query scipisquery, index oid) RETURNS scipisquery
    AS 'MODULE_PATHNAME', 'scipis_query_on' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION scipis_query_on(scipisquery, oid) IS
    'the query bound to an index (kept when it names one already); the planner adds it';

-- Binds a query that names no index to the index of its column, at plan time.
CREATE FUNCTION scipis_op_support(internal) RETURNS internal
    AS 'MODULE_PATHNAME', 'scipis_op_support' LANGUAGE C STRICT;
CREATE FUNCTION scipis_match_op(text, scipisquery) RETURNS boolean
    AS 'MODULE_PATHNAME', 'scipis_match_op' LANGUAGE C STABLE STRICT PARALLEL SAFE
    SUPPORT scipis_op_support;
-- Restricted: every process of a parallel scan would read the index's
-- statistics at its own moment, and scores must not depend on which one.
CREATE FUNCTION scipis_distance_op(text, scipisquery) RETURNS float8
    AS 'MODULE_PATHNAME', 'scipis_distance_op' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED
    SUPPORT scipis_op_support;

-- How many rows match: from the index's N and df of the query's terms.
CREATE FUNCTION scipis_matchsel(internal, oid, internal, integer) RETURNS float8
    AS 'MODULE_PATHNAME', 'scipis_matchsel' LANGUAGE C STABLE STRICT;
CREATE OPERATOR @@@ (
    LEFTARG = text, RIGHTARG = scipisquery, FUNCTION = scipis_match_op,
    RESTRICT = scipis_matchsel, JOIN = contjoinsel
);
COMMENT ON OPERATOR @@@ (text, scipisquery) IS 'the value matches the scipis query';
CREATE OPERATOR <@> (
    LEFTARG = text, RIGHTARG = scipisquery, FUNCTION = scipis_distance_op
);
COMMENT ON OPERATOR <@> (text, scipisquery) IS 'minus the value''s scipis score (0: no match); ORDER BY it for the best first';

CREATE FUNCTION scipis_am_handler(internal) RETURNS index_am_handler
    AS 'MODULE_PATHNAME', 'scipis_am_handler' LANGUAGE C;
CREATE ACCESS METHOD scipis TYPE INDEX HANDLER scipis_am_handler;
COMMENT ON ACCESS METHOD scipis IS 'ranked full-text search (TF-IDF, BM25) over text columns';

CREATE OPERATOR CLASS scipis_text_ops DEFAULT FOR TYPE text USING scipis AS
    OPERATOR 1 @@@ (text, scipisquery),
    OPERATOR 2 <@> (text, scipisquery) FOR ORDER BY float_ops;

-- Filter columns: the index's columns after the text, `USING scipis (line,
-- ts)`, decided inside the index with B-tree's strategies (1 <, 2 <=, 3 =,
-- 4 >=, 5 >). Integers compare across their widths, floats across theirs;
-- dates and timestamps only with their own type.
DO $$
DECLARE
  fam record;
  l text;
  r text;
  ops text[] := ARRAY['<', '<=', '=', '>=', '>'];
BEGIN
  FOR fam IN SELECT * FROM (VALUES
      ('scipis_integer_ops', ARRAY['int2', 'int4', 'int8']),
      ('scipis_float_ops', ARRAY['float4', 'float8']),
      ('scipis_date_ops', ARRAY['date']),
      ('scipis_timestamp_ops', ARRAY['timestamp']),
      ('scipis_timestamptz_ops', ARRAY['timestamptz'])) AS f(name, types)
  LOOP
    EXECUTE format('CREATE OPERATOR FAMILY %I USING scipis', fam.name);
    FOREACH l IN ARRAY fam.types LOOP
      EXECUTE format('CREATE OPERATOR CLASS %I DEFAULT FOR TYPE %s USING scipis FAMILY %I AS %s',
                     'scipis_' || l || '_ops', l, fam.name,
                     (SELECT string_agg(format($f$OPERATOR %s %s (%s, %s)$f$, n, ops[n], l, l), ', ')
                        FROM generate_series(1, 5) g(n)));
      FOREACH r IN ARRAY fam.types LOOP
        CONTINUE WHEN r = l;
        EXECUTE format('ALTER OPERATOR FAMILY %I USING scipis ADD %s', fam.name,
                       (SELECT string_agg(format($f$OPERATOR %s %s (%s, %s)$f$, n, ops[n], l, r), ', ')
                          FROM generate_series(1, 5) g(n)));
      END LOOP;
    END LOOP;
  END LOOP;
END
$$;

CREATE FUNCTION scipis_index_check(index regclass,
                                   OUT problem text, OUT tid tid, OUT detail text)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'scipis_index_check' LANGUAGE C STRICT;
COMMENT ON FUNCTION scipis_index_check(regclass) IS
    'checks a scipis index against its table (like amcheck); no rows when they agree';

CREATE FUNCTION scipis_index_segments(index regclass,
                                      OUT ordinal int, OUT segment bigint, OUT first_page bigint,
                                      OUT pages bigint, OUT bytes bigint)
    RETURNS SETOF record
    AS 'MODULE_PATHNAME', 'scipis_index_segments' LANGUAGE C STRICT;
COMMENT ON FUNCTION scipis_index_segments(regclass) IS
    'the segments of a scipis index, oldest first: identifier, first page, pages, bytes';
