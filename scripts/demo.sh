#!/usr/bin/env bash
# Installs what is missing, builds scipis, and runs the tour (demo/demo.sql)
# on a throwaway PostgreSQL cluster over the shipped Loghub samples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# The server runs as postgres: give it a readable copy of the samples.
sample=$(mktemp -d /tmp/scipis-demo.XXXXXX)
trap 'rm -rf "$sample"' EXIT
cp -r data/loghub-2k "$sample/"
chmod -R a+rX "$sample"
export SCIPIS_SAMPLE="$sample/loghub-2k"
# Preloaded: the launcher runs queued and scheduled jobs (README, "Jobs").
pg_virtualenv -o shared_preload_libraries=scipis -t psql -X -q -v ON_ERROR_STOP=1 -P pager=off -f demo/demo.sql
