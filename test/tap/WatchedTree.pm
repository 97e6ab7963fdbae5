# What the watcher tests share: a tree to change, and the check that a
# watched collection, once scipis_wait_fresh returns, answers as one built
# afresh over the tree.
package WatchedTree;
use strict;
use warnings;
use File::Copy qw(move);
use File::Path qw(make_path remove_tree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

# A tree of three files in a/, a/b/ and c/, a cluster (name, with conf
# added to scipis preloaded) started, and the collection 'w' over the tree
# created with "watch": true. log_at: the server log's size before that.
sub start {
	my ($class, $name, $conf) = @_;
	my $t = $class->new(PostgreSQL::Test::Utils::tempdir(), 'w');
	make_path("$t->{tree}/a/b", "$t->{tree}/c");
	$t->put("a/one.log", "alpha beta\n");
	$t->put("a/b/two.log", "beta gamma\n");
	$t->put("c/three.txt", "gamma delta\n");
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'scipis'\n"
		  . "scipis.scheduler_naptime = '200ms'\nmax_worker_processes = 16\n" . ($conf // ''));
	$node->start;
	$t->{node} = $node;
	$t->{log_at} = -s $node->logfile;
	$node->safe_psql('postgres', 'CREATE EXTENSION scipis');
	$node->safe_psql('postgres', "SELECT scipis_create_collection('w', '$t->{tree}', '{\"watch\": true}')");
	return $t;
}

# The tree and the watched collection's name; node, the cluster, is set
# once it runs (files are put before).
sub new {
	my ($class, $tree, $coll) = @_;
	return bless { node => undef, tree => $tree, coll => $coll, n => 0 }, $class;
}

# Writes (or with '>>', appends) text to a path under the tree.
sub put {
	my ($self, $path, $text, $mode) = @_;
	open(my $fh, $mode // '>', "$self->{tree}/$path") or die "$path: $!";
	print $fh $text;
	close $fh;
}

sub same_as_fresh {
	my ($self, $what) = @_;
	my ($node, $tree, $coll) = @$self{qw(node tree coll)};
	my $t0 = time();
	is($node->safe_psql('postgres', "SELECT scipis_wait_fresh('$coll', now(), '60 s')"), 't',
		"$what: scipis_wait_fresh returned true");
	my $waited = time() - $t0;
	my $fresh = "f" . ++$self->{n};
	$node->safe_psql('postgres', "SELECT scipis_create_collection('$fresh', '$tree')");
	$node->safe_psql('postgres', "SELECT files FROM scipis_index('$fresh')");
	my $q = "SELECT coalesce(string_agg(replace(path, '$tree', '') || ' ' || round(score::numeric, 9), ',' ORDER BY path), '')"
	  . " FROM scipis_search('alpha beta gamma delta epsilon zeta omega', '%s', k => NULL)";
	my $files = "SELECT coalesce(string_agg(replace(path, '$tree', '') || ' ' || size, ',' ORDER BY path), '')"
	  . " FROM scipis_files WHERE collection = '%s'";
	is($node->safe_psql('postgres', sprintf($q, $coll)), $node->safe_psql('postgres', sprintf($q, $fresh)),
		"$what: searches answer as a fresh build");
	is($node->safe_psql('postgres', sprintf($files, $coll)), $node->safe_psql('postgres', sprintf($files, $fresh)),
		"$what: the file list is the tree's");
	$node->safe_psql('postgres', "SELECT scipis_drop_collection('$fresh')");
	note(sprintf("%s: fresh after %.3f s", $what, $waited));
}

# Each kind of change, one at a time, each checked by same_as_fresh:
# create, append, overwrite, truncate, rename, delete, mkdir with files, a
# directory renamed and a file put in it, rmdir.
sub every_kind_of_change {
	my ($self) = @_;
	my $tree = $self->{tree};
	$self->same_as_fresh('start');
	$self->put("a/new.log", "epsilon new\n");
	$self->same_as_fresh('create');
	$self->put("a/one.log", "zeta appended\n", '>>');
	$self->same_as_fresh('append');
	$self->put("c/three.txt", "omega omega\n");
	$self->same_as_fresh('overwrite');
	truncate("$tree/a/one.log", 6) or die;
	$self->same_as_fresh('truncate');
	move("$tree/a/new.log", "$tree/c/moved.log") or die;
	$self->same_as_fresh('rename');
	unlink("$tree/a/b/two.log") or die;
	$self->same_as_fresh('delete');
	make_path("$tree/d/e");
	$self->put("d/e/deep.log", "delta deep\n");
	$self->same_as_fresh('mkdir');
	move("$tree/d", "$tree/a/d2") or die;
	$self->same_as_fresh('rename a directory');
	$self->put("a/d2/e/later.log", "omega later\n");
	$self->same_as_fresh('a file in the renamed directory');
	remove_tree("$tree/c");
	$self->same_as_fresh('rmdir');
}

1;
