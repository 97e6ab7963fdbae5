#!/usr/bin/env bash
# Builds scipis.so and installs it into the system PostgreSQL 15.
set -euo pipefail
cd "$(dirname "$0")/.."
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
make -j"$(nproc)" PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
$SUDO make install PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config >/dev/null
