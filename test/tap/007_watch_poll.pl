# A watcher that polls (scipis.watch_method = poll, as on a network or
# parallel file system, where inotify hears only this host's changes):
# new, deleted and renamed files and directories are found by polls that
# list only changed directories, bytes changed in place by the polls that
# stat every file; scipis_wait_fresh returns only once a poll that saw
# every change has run, and the answers then equal a collection built
# afresh over the tree.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::Bin;
use WatchedTree;

my $t = WatchedTree->start('watch_poll', "scipis.watch_method = poll\nscipis.watch_poll_interval = '300ms'\n");
my ($node, $tree) = @$t{qw(node tree)};
my $log_at = $t->{log_at};
ok($node->poll_query_until('postgres', "SELECT fresh_as_of IS NOT NULL FROM scipis_collections WHERE name = 'w'"),
	'the watcher indexed the tree');
ok($node->wait_for_log(qr/the watcher of "w" polls its tree every 300 ms: scipis.watch_method is poll/, $log_at),
	'the watcher says it polls');

$t->every_kind_of_change();
# Bytes changed in place change no directory: only a poll of every file
# sees them, and scipis_wait_fresh waits for one.
for my $i (1 .. 3) {
	$t->put("a/one.log", "zeta appended $i\n", '>>');
	$t->same_as_fresh("append $i");
}

# The polls of changed directories run between those of every file, and
# a new file's directory is one of those.
my $activity = "SELECT query FROM pg_stat_activity WHERE backend_type = 'scipis watcher'";
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($activity) a WHERE query LIKE '%poll of changed directories%'"),
	'the watcher polls changed directories');
$t->put("a/b/quick.log", "epsilon quick\n");
ok($node->poll_query_until('postgres', "SELECT count(*) = 1 FROM scipis_search('quick', 'w')"),
	'a new file is found');

$node->safe_psql('postgres', "SELECT scipis_drop_collection('w')");
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'scipis watcher'"),
	'the watcher left with its collection');
$node->stop;
done_testing();
