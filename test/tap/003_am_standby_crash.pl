# The scipis index access method under WAL: a streaming standby answers as
# the primary does (after a build, inserts that merge the pending list,
# deletes and VACUUM), and an immediate stop of the primary during
# concurrent inserts recovers to an index whose answers equal a brute-force
# oracle over the table (written here in Perl, independently of the engine).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION scipis');
$primary->safe_psql('postgres', q{
	CREATE TABLE logs (id int PRIMARY KEY, body text);
	INSERT INTO logs SELECT i,
	  'node' || (i % 37) || ' ' || CASE WHEN i % 11 = 0 THEN 'ERROR disk failure ' ELSE 'ok ' END ||
	  repeat('w' || (i % 101) || ' ', 1 + i % 5) || CASE WHEN i % 7 = 0 THEN NULL ELSE 'tail' END
	  FROM generate_series(1, 3000) i;
	CREATE INDEX logs_body ON logs USING scipis (body) WITH (pending_limit = 64, indexer_threads = 2);
});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;

my @queries = ("error disk", "w5 node3", "tail", "w100 w100 ok", "failure node36");
sub answers
{
	my ($node, $ranking) = @_;
	my @out;
	for my $q (@queries)
	{
		push @out, $node->safe_psql('postgres', qq{
			SET enable_seqscan = off;
			SELECT string_agg(id || ':' || round((-(body <@> scipis_query('$q', '$ranking')))::numeric, 12), ' ')
			FROM (SELECT id, body FROM logs ORDER BY body <@> scipis_query('$q', '$ranking') LIMIT 25) s});
		push @out, $node->safe_psql('postgres', qq{
			SET enable_seqscan = off; SET enable_indexscan = off;
			SELECT count(*) FROM logs WHERE body @@@ '$q'});
	}
	return join("\n", @out);
}

$primary->wait_for_catchup($standby);
is(answers($standby, 'tfidf'), answers($primary, 'tfidf'), 'standby answers as the primary after CREATE INDEX');

# A build after the standby's backup: the build writes its pages past
# shared buffers, logging each batch, so the standby has them from the WAL
# alone, and so has the primary after an immediate stop right after it.
$primary->safe_psql('postgres', q{
	CREATE TABLE logs2 AS SELECT * FROM logs;
	CREATE INDEX logs2_body ON logs2 USING scipis (body, id) WITH (indexer_threads = 2, tfidf_index_size = 1);
});
# With a condition on the filter column (id) too, decided in the index.
sub answers2
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SET enable_seqscan = off;
		SELECT string_agg(id || ':' || round((-(body <@> scipis_query('error disk w5 tail', index => 'logs2_body')))::numeric, 12), ' ')
		FROM (SELECT id, body FROM logs2 ORDER BY body <@> scipis_query('error disk w5 tail', index => 'logs2_body') LIMIT 60) s;
		SELECT string_agg(id || ':' || round((-(body <@> scipis_query('error disk w5 tail', index => 'logs2_body')))::numeric, 12), ' ')
		FROM (SELECT id, body FROM logs2 WHERE body @@@ 'error disk w5 tail' AND id BETWEEN 700 AND 2200
		      ORDER BY body <@> scipis_query('error disk w5 tail', index => 'logs2_body') LIMIT 60) s});
}
my $built = answers2($primary);
$primary->wait_for_catchup($standby);
is(answers2($standby), $built, 'standby answers as the primary after a build it has from the WAL alone');
$primary->stop('immediate');
$primary->start;
is(answers2($primary), $built, 'a build replayed after an immediate stop answers as before');
is($primary->safe_psql('postgres', "SELECT count(*) FROM scipis_index_check('logs2_body')"), '0',
	'the replayed build checks clean');
$primary->safe_psql('postgres', 'DROP TABLE logs2');

$primary->safe_psql('postgres', q{
	INSERT INTO logs SELECT i, 'late ERROR row ' || i || ' disk' FROM generate_series(3001, 4500) i;
	DELETE FROM logs WHERE id % 5 = 0;
	UPDATE logs SET body = body || ' updated' WHERE id % 13 = 0;
});
$primary->wait_for_catchup($standby);
is(answers($standby, 'bm25'), answers($primary, 'bm25'), 'standby answers as the primary after inserts and deletes');
$primary->safe_psql('postgres', 'VACUUM logs');
$primary->wait_for_catchup($standby);
is(answers($standby, 'tfidf'), answers($primary, 'tfidf'), 'standby answers as the primary after VACUUM');
is(answers($standby, 'bm25'), answers($primary, 'bm25'), 'and under BM25');

# Crash during concurrent inserts.
my ($wout, $werr) = ('', '');
my $writer = IPC::Run::start(
	[ 'psql', '-X', '-d', $primary->connstr('postgres'), '-c', q{
	DO $$ BEGIN FOR i IN 5000 .. 400000 LOOP
	  INSERT INTO logs VALUES (i, 'crash w' || (i % 17) || ' disk ' || repeat('x', i % 9));
	  IF i % 50 = 0 THEN COMMIT; END IF; END LOOP; END $$;} ],
	'>', \$wout, '2>', \$werr);
# Let it commit some batches (and merge the pending list a few times).
$primary->poll_query_until('postgres', 'SELECT count(*) > 2000 FROM logs WHERE id >= 5000')
  or die 'the writer made no progress';
$primary->stop('immediate');
eval { $writer->finish; };
$primary->start;
$primary->safe_psql('postgres', 'VACUUM logs');

# The oracle: the spec's tokenizer and TF-IDF over the live rows.
my $rows = $primary->safe_psql('postgres', "SELECT id || E'\\t' || coalesce(body, E'\\\\N') FROM logs");
my (%tf, %len, %df);
my $N = 0;
for my $line (split /\n/, $rows)
{
	my ($id, $body) = split /\t/, $line, 2;
	next if $body eq '\\N';
	my @toks = map { lc } ($body =~ /[A-Za-z0-9_\x80-\xff]+/g);
	next unless @toks;
	$N++;
	$len{$id} = scalar @toks;
	my %seen;
	for my $t (@toks) { $tf{$id}{$t}++; $seen{$t} = 1; }
	$df{$_}++ for keys %seen;
}
my $failures = 0;
for my $q ("crash disk", "w3", "error", "x w16 disk")
{
	my %qf;
	$qf{lc $_}++ for ($q =~ /[A-Za-z0-9_\x80-\xff]+/g);
	my @scored;
	for my $id (keys %tf)
	{
		my ($s, $have) = (0, 0);
		for my $t (keys %qf)
		{
			next unless $tf{$id}{$t};
			$have++;
			$s += $qf{$t} * sqrt($tf{$id}{$t}) * (1 + log(($N + 1) / ($df{$t} + 1))) / sqrt($len{$id});
		}
		push @scored, [ $id, $s ] if $have;
	}
	@scored = sort { $b->[1] <=> $a->[1] || $a->[0] <=> $b->[0] } @scored;
	my $k = 20;
	$k = @scored if @scored < $k;
	my $got = $primary->safe_psql('postgres', qq{
		SET enable_seqscan = off;
		SELECT string_agg((-(body <@> '$q'))::text, ' ') FROM
		  (SELECT body FROM logs ORDER BY body <@> '$q' LIMIT $k) s});
	my @g = split / /, $got;
	is(scalar @g, $k, "after the crash '$q' returns $k rows");
	for my $i (0 .. $k - 1)
	{
		my $want = $scored[$i][1];
		if (abs($g[$i] - $want) > 1e-9 * $want) { $failures++; diag("'$q' rank $i: got $g[$i], want $want"); }
	}
	my $count = $primary->safe_psql('postgres', "SET enable_seqscan = off; SELECT count(*) FROM logs WHERE body @@@ '$q'");
	is($count, scalar @scored, "after the crash '$q' matches the oracle's rows");
}
is($failures, 0, 'after the crash every score equals the oracle');
is($primary->safe_psql('postgres', "SELECT count(*) FROM scipis_index_check('logs_body')"),
	'0', 'scipis_index_check finds nothing after recovery');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', "SELECT count(*) FROM scipis_index_check('logs_body')"),
	'0', 'nor on the standby');

# A damaged segment page: an error naming the index, never a crash. After
# a REINDEX, block 1 is the first page of the first segment: its rows.
$primary->safe_psql('postgres', 'REINDEX INDEX logs_body');
my $file = $primary->data_dir . '/'
  . $primary->safe_psql('postgres', "SELECT pg_relation_filepath('logs_body')");
$primary->stop;
open(my $fh, '+<', $file) or die "open $file: $!";
binmode $fh;
seek($fh, 8192 + 4000, 0);    # block 1: the first segment's first page
print $fh "\xff\xfe\xfd\xfc";
close $fh;
$primary->start;
my ($ret, $out, $err) = $primary->psql('postgres',
	"SET enable_seqscan = off; SELECT count(*) FROM (SELECT id FROM logs ORDER BY body <@> 'crash disk node1' LIMIT 10) s");
isnt($ret, 0, 'a query over a damaged page fails');
like($err, qr/scipis index "logs_body" is damaged/, 'with an error naming the index');
like($primary->safe_psql('postgres', "SELECT string_agg(problem, ',') FROM scipis_index_check('logs_body')"),
	qr/index damaged/, 'scipis_index_check reports the damage');
is($primary->safe_psql('postgres', 'SELECT 1'), '1', 'the server is still up');
$primary->safe_psql('postgres', 'REINDEX INDEX logs_body');
is($primary->safe_psql('postgres', "SELECT count(*) FROM scipis_index_check('logs_body')"),
	'0', 'REINDEX repairs it');

$standby->stop;
$primary->stop;
done_testing();
