# scipis.data_directory puts index files elsewhere; collections of two
# databases never share files.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $tree = PostgreSQL::Test::Utils::tempdir();
for my $f (0 .. 9) {
	open(my $fh, '>', "$tree/f$f.log") or die;
	print $fh "alpha beta f$f\n";
	close $fh;
}
my $elsewhere = PostgreSQL::Test::Utils::tempdir();

my $node = PostgreSQL::Test::Cluster->new('datadir');
$node->init;
$node->append_conf('postgresql.conf', "scipis.data_directory = '$elsewhere'");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE other');
for my $db ('postgres', 'other') {
	$node->safe_psql($db, 'CREATE EXTENSION scipis');
	$node->safe_psql($db, "SELECT scipis_create_collection('c', '$tree')");
	$node->safe_psql($db, "SELECT files FROM scipis_index('c')");
}
is($node->safe_psql('postgres', 'SHOW scipis.data_directory'), $elsewhere, 'the GUC is set');
my @manifests = glob("$elsewhere/*/c*/MANIFEST");
is(scalar(@manifests), 2, 'each database has its own index under scipis.data_directory');
ok(!-e $node->data_dir . '/scipis', 'nothing was written under the data directory');
is($node->safe_psql('other', "SELECT count(*) FROM scipis_search('alpha', k => NULL)"),
	'10', 'the other database answers from its own index');

# Searches keep answering while rebuilds replace the index under them.
my $searcher = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('other'), '-c',
	  "DO \$\$ DECLARE n int; BEGIN FOR i IN 1..20000 LOOP "
	  . "SELECT count(*) INTO n FROM scipis_search('alpha', 'c', k => NULL); "
	  . "IF n <> 10 THEN RAISE EXCEPTION 'got % rows', n; END IF; END LOOP; END \$\$" ],
	'>', \my $sout, '2>', \my $serr);
$node->safe_psql('other', "SELECT files FROM scipis_index('c')") for 1 .. 15;
$searcher->finish;
is($searcher->result(0), 0, 'searches during rebuilds never fail') or diag($serr);

$node->safe_psql('other', "SELECT scipis_drop_collection('c')");
@manifests = glob("$elsewhere/*/c*/MANIFEST");
is(scalar(@manifests), 1, 'dropping a collection removes its files at commit');
$node->safe_psql('postgres', "BEGIN; SELECT scipis_drop_collection('c'); ROLLBACK;");
is($node->safe_psql('postgres', "SELECT count(*) FROM scipis_search('beta', k => NULL)"),
	'10', 'a rolled-back drop keeps the collection and its files');

$node->stop;
done_testing();
