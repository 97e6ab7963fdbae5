-- The crawler on a tree with special files, symlinks, odd names and files
-- the server may not read (the server runs as another OS user than psql).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS scipis;
RESET client_min_messages;
\set tree `echo /tmp/scipis-crawl-$PGPORT`
\setenv TREE :tree
\! rm -rf "$TREE" && mkdir -p "$TREE/sub/deeper" "$TREE/closed" && cd "$TREE" && printf 'alpha beta\n' > plain.log && printf 'alpha gamma' > 'with space.log' && printf 'alpha\n' > "$(printf 'new\nline.log')" && printf 'alpha delta' > "$(printf 'bad\377.log')" && : > empty.log && printf 'Alpha ALPHA' > sub/deeper/upper.txt && printf 'secret alpha' > unreadable.log && printf 'alpha' > closed/inside.log && mkfifo pipe && ln -s "$TREE" sub/loop && ln -s "$TREE/plain.log" link.log && chmod -R a+rX "$TREE" && chmod 000 unreadable.log closed
SELECT scipis_create_collection('crawl', :'tree');
SELECT files, tokens, skipped FROM scipis_index('crawl');
SELECT replace(path, :'tree', '') AS file, size, tokens FROM scipis_files WHERE collection = 'crawl' ORDER BY path;
SELECT replace(path, :'tree', '') AS file, round(score::numeric, 9) AS score FROM scipis_search('alpha', 'crawl', k => NULL);
SELECT replace(path, :'tree', '') AS file FROM scipis_search('delta', 'crawl');
SELECT count(*) FROM scipis_lookup(convert_to(:'tree' || '/bad', 'UTF8') || '\xff'::bytea || convert_to('.log', 'UTF8'));
SELECT count(*) FROM scipis_lookup(:'tree' || E'/new\nline.log');
-- Following symlinks: the loop is crawled once, the file link is indexed.
SELECT scipis_create_collection('crawl_links', :'tree', '{"follow_symlinks": true, "exclude": ["closed", "*.txt"]}');
SELECT files, skipped FROM scipis_index('crawl_links');
SELECT replace(path, :'tree', '') AS file FROM scipis_files WHERE collection = 'crawl_links' ORDER BY path;
-- Whitespace tokenizer: punctuation stays inside tokens.
SELECT scipis_create_collection('crawl_ws', :'tree', '{"tokenizer": "whitespace", "include": "*.log"}');
SELECT files FROM scipis_index('crawl_ws');
SELECT replace(path, :'tree', '') AS file FROM scipis_search('alpha', 'crawl_ws', k => NULL);
SELECT scipis_drop_collection('crawl');
SELECT scipis_drop_collection('crawl_links');
SELECT scipis_drop_collection('crawl_ws');
\! chmod 755 "$TREE/closed"; rm -rf "$TREE"
