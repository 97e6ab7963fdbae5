# Merge jobs after builds (README "Compaction"): a build that leaves its
# indexer several segments queues one; it waits while another holds the
# collection's lock, can be canceled (the build's segments stay), survives
# a restart queued and then merges them into one; searches answer as a
# build of the same tree that was not merged, throughout.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(make_path);
use IPC::Run;
use Time::HiRes qw(usleep);

# 2,000 files over 20,997 words with a 4 MB term table and one indexer:
# several segments, whose terms a merge in step may hold.
my $tree = PostgreSQL::Test::Utils::tempdir();
for my $d (0 .. 19) {
	make_path("$tree/d$d");
	for my $f (0 .. 99) {
		my $n = $d * 100 + $f;
		open(my $fh, '>', "$tree/d$d/f$f.log") or die;
		print $fh join(' ', map { "w" . ($n * $_ % 997) . ' x' . (($n * 7919 + $_) % 20000) } 1 .. 400), "\n";
		close $fh;
	}
}
my $opts = '{"tfidf_index_size": "4MB", "indexer_threads": 1';

my $node = PostgreSQL::Test::Cluster->new('merge_jobs');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'scipis'\n"
	  . "scipis.scheduler_naptime = '200ms'\nmax_worker_processes = 16\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION scipis');
$node->safe_psql('postgres', "SELECT scipis_create_collection('clean', '$tree', '$opts, \"merge_after_build\": false}')");
$node->safe_psql('postgres', "SELECT scipis_create_collection('c', '$tree', '$opts}')");
my $built = $node->safe_psql('postgres', "SELECT segments FROM scipis_index('clean')");
cmp_ok($built, '>', 1, "the build leaves its indexer several segments ($built)");
is($node->safe_psql('postgres', "SELECT count(*) FROM scipis_jobs WHERE target = 'clean' AND kind = 'merge'"),
	'0', 'merge_after_build false queues no merge job');

sub answers {
	my ($coll) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(replace(path, '$tree', '') || ' ' || score, E'\\n' ORDER BY score DESC, path) "
		  . "FROM (SELECT * FROM scipis_search('w1 w2 x3 w500', '$coll', k => NULL) UNION ALL "
		  . "SELECT * FROM scipis_search('x17 w996', '$coll', k => 10)) s");
}
my $clean = answers('clean');
ok(length($clean) > 0, 'the unmerged build answers');
sub segments {
	return $node->safe_psql('postgres', "SELECT segments FROM scipis_collections WHERE name = '$_[0]'");
}
sub state {
	return $node->safe_psql('postgres', "SELECT state FROM scipis_jobs WHERE id = $_[0]");
}
my $cid = $node->safe_psql('postgres', "SELECT id FROM scipis_collection WHERE name = 'c'");

# Another session takes the collection's lock (the jobs' advisory lock) as
# the build job lets it go: the merge job the build queued cannot start.
# However fast the build, it cannot end first: the build job is queued
# while a first session holds the collection's lock, and a second locks
# the job table against updates, so the worker that claims the job takes
# the collection's lock and then waits to mark it running. Only once the
# third session is queued for the lock behind it does the build go on.
sub session {
	my ($in, $out) = ('', '');
	my $h = IPC::Run::start([ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres') ],
		'<', \$in, '>', \$out, '2>', \my $err, IPC::Run::timeout(300));
	return ($h, \$in, \$out);
}
sub send_wait {
	my ($h, $in, $out, $sql, $until) = @_;
	$$in .= "$sql\n";
	$h->pump until $$out =~ $until;
}
sub build_held {
	my ($first, $first_in, $first_out) = session();
	send_wait($first, $first_in, $first_out,
		"SELECT pg_advisory_lock(1935894889, $cid); SELECT 'first';", qr/first/);
	my $job = $node->safe_psql('postgres', "SELECT job FROM scipis_index('c', wait => false)");
	my ($table, $table_in, $table_out) = session();
	send_wait($table, $table_in, $table_out,
		"BEGIN; LOCK TABLE scipis_job IN SHARE MODE; SELECT 'table';", qr/table/);
	send_wait($first, $first_in, $first_out,
		"SELECT pg_advisory_unlock(1935894889, $cid); SELECT 'freed';", qr/freed/);
	$$first_in .= "\\q\n";
	$first->finish;
	# A worker claims the job: it holds the collection's lock.
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND granted"
		  . " AND classid = 1935894889 AND objid = $cid")
	  or die "no worker took the build job";
	my ($h, $in, $out) = session();
	$$in .= "SELECT pg_advisory_lock(1935894889, $cid);\nSELECT 'held';\n";
	$h->pump while length $$in;
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
		  . " AND classid = 1935894889 AND objid = $cid")
	  or die "the lock was not asked for";
	is(state($job), 'queued', 'the build job is not marked running while the lock is asked for');
	send_wait($table, $table_in, $table_out, "COMMIT; SELECT 'done';", qr/done/);
	$$table_in .= "\\q\n";
	$table->finish;
	# It waits behind the build, which holds the lock while it runs.
	$h->pump until $$out =~ /held/;
	is(state($job), 'succeeded', 'the build job ended before the lock was taken');
	my $merge = $node->safe_psql('postgres',
		"SELECT id FROM scipis_jobs WHERE target = 'c' AND kind = 'merge' AND id > $job");
	like($merge, qr/^\d+$/, 'the build queued a merge job');
	return ($h, $in, $merge);
}
sub release {
	my ($h, $in) = @_;
	$$in .= "\\q\n";
	$h->finish;
}

# Held back, then canceled: the build's segments stay.
my ($h, $in, $merge) = build_held();
usleep(500_000);
is(state($merge), 'queued', 'the merge job waits while the lock is held');
is(segments('c'), $built, 'the build left as many segments as the unmerged one');
is(answers('c'), $clean, 'the build answers as the unmerged one');
is($node->safe_psql('postgres', "SELECT scipis_cancel_job($merge)"), 't', 'cancel accepted');
$node->poll_query_until('postgres', "SELECT state = 'canceled' FROM scipis_jobs WHERE id = $merge")
  or die "the merge job was not canceled";
release($h, $in);
is(segments('c'), $built, 'a canceled merge leaves the segments as the build left them');

# Held back, then a fast stop: after the restart it runs, and merges.
($h, $in, $merge) = build_held();
$node->stop('fast');
$h->finish;
$node->start;
$node->poll_query_until('postgres',
	"SELECT state IN ('succeeded', 'failed', 'canceled') FROM scipis_jobs WHERE id = $merge")
  or die "the merge job did not end after the restart";
is(state($merge), 'succeeded', 'the merge job queued at the stop ran after the restart');
is(segments('c'), '1', 'it merged the build\'s segments into one');
is($node->safe_psql('postgres',
		"SELECT (result->>'segments_merged')::int FROM scipis_job WHERE id = $merge"), $built,
	'its result counts every segment it merged');
is(answers('c'), $clean, 'the merged collection answers as the unmerged one');

# A rebuild and a refresh while the rebuild's merge job may run (it
# holds the lock only to start and to commit): the answers are the tree's,
# the new file included, merged or not.
open(my $fh, '>', "$tree/d0/new.log") or die;
print $fh "w1 w2 fresh\n";
close $fh;
$node->safe_psql('postgres', "SELECT segments FROM scipis_index('c')");
my $refreshed = $node->safe_psql('postgres', "SELECT files_added FROM scipis_refresh('c')");
is($refreshed, '0', 'a refresh after the rebuild finds nothing new');
$node->safe_psql('postgres', "SELECT scipis_wait_job(id) FROM scipis_jobs WHERE target = 'c' AND kind = 'merge'");
is($node->safe_psql('postgres', "SELECT count(*) FROM scipis_search('fresh', 'c', k => NULL)"), '1',
	'the rebuild indexed the new file');
$node->safe_psql('postgres', "SELECT files FROM scipis_index('clean')");
is(answers('c'), answers('clean'), 'merged or not, both answer alike');

$node->stop;
done_testing();
