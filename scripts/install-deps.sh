#!/usr/bin/env bash
# Installs the Debian 12 packages scipis builds, tests and demos with.
# Nothing else is downloaded: every dependency is a Debian package.
set -euo pipefail
PKGS=(build-essential postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
      libtap-parser-sourcehandler-pgtap-perl libipc-run-perl libabsl-dev
      libnuma-dev libgtest-dev python3 ca-certificates)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
