
-- Index files left by an earlier installation in this database (DROP
-- EXTENSION cannot remove them) would be taken for the new collections'
-- and block indexes' own: remove them as the extension is created.
CREATE FUNCTION scipis_remove_leftovers() RETURNS void
AS 'MODULE_PATHNAME', 'scipis_remove_leftovers' LANGUAGE C VOLATILE;
SELECT scipis_remove_leftovers();
DROP FUNCTION scipis_remove_leftovers();
