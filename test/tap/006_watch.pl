# The watcher (collection option "watch", scipis preloaded): each kind of
# change to the tree (create, append, overwrite, truncate, rename, delete,
# mkdir with files, a directory renamed, rmdir) becomes searchable by
# itself, scipis_wait_fresh returns once it is, and the answers equal a
# collection built afresh over the tree; with every batch of events taken
# as a queue overflow (scipis.watch_test_overflow) the watcher walks the
# whole tree and still misses nothing; under unbroken churn tombstoned
# documents are merged away beside the refreshes. The watcher leaves when
# the collection is dropped.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FindBin;
use lib $FindBin::Bin;
use WatchedTree;

my $t = WatchedTree->start('watch');
my ($node, $tree) = @$t{qw(node tree)};
ok($node->poll_query_until('postgres', "SELECT fresh_as_of IS NOT NULL FROM scipis_collections WHERE name = 'w'"),
	'the watcher indexed the tree');
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'scipis watcher'"),
	'one watcher runs');

$t->every_kind_of_change();

# Many small refreshes: their segments are merged beside the refreshes
# that follow (and committed when the watcher is idle), so they do not
# pile up, and the answers stay a fresh build's.
for my $i (1 .. 30) {
	$t->put("a/many-$i.log", "epsilon many $i\n");
	$t->put("a/one.log", "zeta $i\n", '>>');
	is($node->safe_psql('postgres', "SELECT scipis_wait_fresh('w', now(), '60 s')"), 't', "small change $i is fresh");
}
ok($node->poll_query_until('postgres', "SELECT segments < 10 FROM scipis_collections WHERE name = 'w'"),
	'segments of 30 refreshes were merged');
$t->same_as_fresh('merged beside the refreshes');

# Under unbroken churn the watcher merges tombstoned documents away
# beside its refreshes (scipis.watch_garbage_merge_interval, shortened
# here): rewrites leave tombstones, the merge drops them, its commit
# refreshes on top of it what changed meanwhile, and the answers stay a
# fresh build's. The churn goes on until the log shows such a merge.
$node->append_conf('postgresql.conf', "scipis.watch_garbage_merge_interval = '300ms'\n");
$node->reload;
my $log_at = -s $node->logfile;
my ($renumbered, $round) = (0, 0);
my $deadline = time() + 120;
while (!$renumbered && time() < $deadline) {
	$round++;
	$t->put("a/rewritten-" . ($round % 5) . ".log", "eta rewritten $round " . ("theta " x 50) . "\n");
	usleep(100_000);
	$renumbered = slurp_file($node->logfile, $log_at) =~ /renumbered \d+ segments beside its refreshes/;
}
ok($renumbered, "a merge renumbered beside the refreshes under churn ($round rewrites)");
$t->same_as_fresh('renumbered beside the refreshes');

# Every batch taken as an overflow: the whole tree is walked. A restart,
# so that the watcher has the setting before the changes are made.
$node->append_conf('postgresql.conf', "scipis.watch_test_overflow = on\n");
$node->restart;
my $activity = "SELECT query FROM pg_stat_activity WHERE backend_type = 'scipis watcher'";
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($activity) a WHERE query LIKE '%(start)%'"),
	'the watcher runs again after the restart');
$t->put("a/after-overflow.log", "epsilon overflow\n");
unlink("$tree/a/d2/e/deep.log") or die;
$t->same_as_fresh('queue overflow');
like($node->safe_psql('postgres', $activity), qr/whole tree \(events lost\)/,
	'the overflow was answered by a walk of the whole tree');

my $wid = $node->safe_psql('postgres', "SELECT id FROM scipis_collection WHERE name = 'w'");
$node->safe_psql('postgres', "SELECT scipis_drop_collection('w')");
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'scipis watcher'"),
	'the watcher left with its collection');
my @left = glob($node->data_dir . "/scipis/*/c$wid");
is(scalar(@left), 0, 'nothing of the watched collection is left on disk');
$node->stop;
done_testing();
