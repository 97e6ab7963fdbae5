# Refresh with scipis preloaded: a worker killed (kill -9) in the middle of
# a refresh leaves the previous index whole (every search answers as before
# the refresh or as after it, never a mix), the refresh runs again after
# the restart and then answers as a collection built afresh over the tree;
# the scheduled refresh_interval job is a refresh; with synchronous_commit
# off a refresh's unsynced journal record outlives an immediate stop.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Path qw(make_path);
use Time::HiRes qw(time usleep);

# 8,000 files with a 1 MB term table and one indexer thread: reading them
# all takes seconds, so that the kill lands inside the refresh.
my $tree = PostgreSQL::Test::Utils::tempdir();
sub write_tree {
	my ($salt) = @_;
	for my $d (0 .. 79) {
		make_path("$tree/d$d");
		for my $f (0 .. 99) {
			my $n = $d * 100 + $f;
			open(my $fh, '>', "$tree/d$d/f$f.log") or die;
			print $fh join(' ', map { "w" . (($n + $salt) * $_ % 997) . ' x' . ($n * 7919 + $_ + $salt) } 1 .. 400), "\n";
			close $fh;
		}
	}
	# Past the racy window (0.1 s) of a run that reads them next.
	usleep(200_000);
}
write_tree(0);
# (No merge jobs after builds: this counts segments and generations.)
my $opts = '{"tfidf_index_size": "1MB", "indexer_threads": 1, "merge_after_build": false}';

my $node = PostgreSQL::Test::Cluster->new('refresh');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'scipis'\n"
	  . "scipis.scheduler_naptime = '200ms'\nmax_worker_processes = 16\nrestart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION scipis');
$node->safe_psql('postgres', "SELECT scipis_create_collection('c', '$tree', '$opts')");
$node->safe_psql('postgres', "SELECT files FROM scipis_index('c')");

sub answers {
	my ($coll) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(replace(path, '$tree', '') || ' ' || score, E'\\n' ORDER BY score DESC, path) "
		  . "FROM scipis_search('w1 w2 w3 w500', '$coll', k => NULL)");
}
sub job {
	my ($id, $cols) = @_;
	return $node->safe_psql('postgres', "SELECT $cols FROM scipis_jobs WHERE id = $id");
}
my $before = answers('c');
ok(length($before) > 0, 'the collection answers');

# Every file rewritten; a collection built afresh over the new tree.
write_tree(1);
$node->safe_psql('postgres', "SELECT scipis_create_collection('clean', '$tree', '$opts')");
$node->safe_psql('postgres', "SELECT files FROM scipis_index('clean')");
my $after = answers('clean');
isnt($after, $before, 'the rewritten tree answers otherwise');

my $id = $node->safe_psql('postgres', "SELECT job FROM scipis_refresh('c', wait => false)");
# The worker is stopped (SIGSTOP) as soon as the refresh has read some
# files, so that it cannot end while the searches and psql's starts below
# run on a loaded machine; it is killed while stopped.
my $pid = '';
for (my $until = time() + 180; time() < $until && $pid eq ''; usleep(20_000)) {
	$pid = $node->safe_psql('postgres',
		"SELECT worker_pid FROM scipis_job WHERE id = $id AND state = 'running' AND files_done > 0");
}
ok($pid =~ /^\d+$/ && $pid > 0, 'the refresh runs');
die "no worker pid for job $id" unless $pid =~ /^\d+$/ && $pid > 0;
kill 'STOP', $pid or die "cannot stop worker $pid";
my $during = answers('c');
ok($during eq $before || $during eq $after, 'during the refresh the collection answers as before or after it');
my $attempts = job($id, 'attempts');
# The postmaster restarts every process after the crash; wait for its log
# to say so (poll_query_until feeds psql on stdin, and dies of EPIPE when
# psql is turned away mid-restart before it reads the query).
my $log_at = -s $node->logfile;
kill 'KILL', $pid;
$node->wait_for_log(qr/database system is ready to accept connections/, $log_at);
# Until the refresh ran again: every answer is the old one or the new one.
my ($mixed, $polls) = (0, 0);
my $until = time() + $PostgreSQL::Test::Utils::timeout_default;
while (time() < $until) {
	my $a = answers('c');
	$polls++;
	$mixed++ if $a ne $before && $a ne $after;
	last if job($id, 'state') =~ /succeeded|failed|canceled/;
	usleep(50_000);
}
note("$polls searches while the refresh ran again");
is($mixed, 0, 'no search saw a mix of the old and the new index');
is(job($id, 'state'), 'succeeded', 'after the kill the refresh ran again and succeeded');
cmp_ok(job($id, 'attempts'), '>', $attempts, 'it took another attempt');
is(answers('c'), $after, 'the refreshed collection answers as one built afresh');
# Older generations stay only as the homes of live segments: segment
# files and nothing else (their lists went with the commit after them).
# A small segment's pack lies at its generation's root (manifest 6), or in
# its generation's journal (manifest 7), which stays while a pack in it is live.
my @gens = glob($node->data_dir . "/scipis/*/c*/g*");
my %lists;
my $bare = 0;
for my $g (@gens)
{
	my @top = grep { -f $_ && !/\.pack$/ && !m{/JOURNAL$} } glob("$g/*");
	my @segs = (glob("$g/*/seg_*"), glob("$g/*.pack"), glob("$g/JOURNAL"));
	$lists{ $g =~ s{/g\d+$}{}r }++ if @top;
	$bare++ unless @top || @segs;
}
is((grep { $_ > 1 } values %lists), 0, 'one generation per collection holds lists');
is($bare, 0, 'every other generation left on disk holds live segments');

# The schedule queues refreshes.
$node->safe_psql('postgres',
	"SELECT scipis_create_collection('nightly', '$tree/d1', '{\"refresh_interval\": \"1 second\"}')");
ok($node->poll_query_until('postgres',
		"SELECT count(*) >= 2 FROM scipis_jobs WHERE target = 'nightly' AND scheduled"
		  . " AND kind = 'refresh' AND state = 'succeeded'"),
	'the scheduled jobs are refreshes');
is($node->safe_psql('postgres', "SELECT count(*) FROM scipis_search('w1', 'nightly', k => NULL)"),
	$node->safe_psql('postgres', "SELECT count(*) FROM scipis_search('w1', 'clean', k => NULL) WHERE path LIKE '$tree/d1/%'"),
	'the scheduled refreshes answer');

# synchronous_commit = off: a refresh's journal record may stay unsynced.
# The server stopped at once (every backend killed) keeps it, as the page
# cache outlives processes; only a crash of the machine could take it back.
$node->safe_psql('postgres', "SELECT scipis_create_collection('unsynced', '$tree/d3')");
$node->safe_psql('postgres', "SELECT files FROM scipis_index('unsynced')");
for my $i (0 .. 2)
{
	open(my $fh, '>>', "$tree/d3/f$i.log") or die;
	print $fh "unsynced$i words\n";
	close $fh;
	usleep(200_000);
	$node->safe_psql('postgres', "SET synchronous_commit = off; "
		  . "SELECT files_appended + files_changed FROM scipis_refresh('unsynced', ARRAY['$tree/d3/f$i.log'])");
}
# Records (magic SCIPISJR, u64 length at 32, u32 lists at 48, bit 31:
# written without a sync) in every journal: only this collection refreshed
# with synchronous_commit off.
my ($records, $unsynced) = (0, 0);
for my $j (glob($node->data_dir . "/scipis/*/c*/g*/JOURNAL"))
{
	open(my $fh, '<:raw', $j) or die;
	local $/;
	my $bytes = <$fh>;
	close $fh;
	my $pos = 0;
	while ($pos + 64 <= length($bytes) && substr($bytes, $pos, 8) eq 'SCIPISJR')
	{
		my ($len) = unpack('Q<', substr($bytes, $pos + 32, 8));
		my ($lists) = unpack('L<', substr($bytes, $pos + 48, 4));
		$records++;
		$unsynced++ if $lists & 0x80000000;
		last if $len == 0;
		$pos += $len;
	}
}
note("$records journal records, $unsynced unsynced");
cmp_ok($unsynced, '>', 0, 'with synchronous_commit off a refresh left its record unsynced');
my $found = "SELECT count(*) FROM scipis_search('unsynced0 unsynced1 unsynced2', 'unsynced', k => NULL)";
is($node->safe_psql('postgres', $found), 3, 'the unsynced refreshes answer');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', $found), 3, 'and still answer after an immediate stop');
$node->safe_psql('postgres', "SELECT scipis_create_collection('unsynced_clean', '$tree/d3')");
$node->safe_psql('postgres', "SELECT files FROM scipis_index('unsynced_clean')");
is(answers('unsynced'), answers('unsynced_clean'), 'as a collection built afresh');

$node->stop;
done_testing();
