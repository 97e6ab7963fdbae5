# What the watcher tests share: a tree to change, and the check that a
# watched collection, once scipis_wait_fresh returns, answers as one built
# afresh over the tree.
package WatchedTree;
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(time);

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

1;
