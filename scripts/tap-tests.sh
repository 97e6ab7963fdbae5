#!/usr/bin/env bash
# Perl TAP tests with PostgreSQL::Test::Cluster. initdb refuses root, so as
# root they run as the postgres user in a scratch directory it owns.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
export PATH=/usr/lib/postgresql/15/bin:$PATH
PERLLIB=/usr/lib/postgresql/15/lib/pgxs/src/test/perl
PGREGRESS=/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress
work=$(mktemp -d /tmp/scipis-tap.XXXXXX)
chmod 755 "$work"
# A copy the postgres user can read wherever this checkout lives.
cp -r test/tap "$work/tap"
run() {
  if [ "$(id -u)" -eq 0 ]; then
    chown -R postgres: "$work"
    runuser -u postgres -- env PATH="$PATH" PG_REGRESS="$PGREGRESS" PERL5LIB="$PERLLIB" TESTDIR="$work" \
      SCIPIS_REPO="$REPO" bash -c "cd '$work' && prove -v --timer -j3 $*"
  else
    env PG_REGRESS="$PGREGRESS" PERL5LIB="$PERLLIB" TESTDIR="$work" SCIPIS_REPO="$REPO" bash -c "cd '$work' && prove -v --timer -j3 $*"
  fi
}
# They wait on servers more than they compute: three at a time, the
# longest first (each has clusters and ports of its own).
tests=$(cd "$work/tap" && ls -S *.pl | sed "s|^|$work/tap/|")
run $tests
rc=$?
[ $rc -eq 0 ] && rm -rf "$work" || { find "$work/tmp_check/log" -name "*.log" | head -5 | while read f; do echo "== $f"; tail -20 "$f"; done; rm -rf "$work"; }
exit $rc
