#!/usr/bin/env bash
# What the Python package's xdist tests (packages/python/tests/test_xdist.py)
# need when no Python on PATH has pytest-xdist and PyPI is out of reach:
# Debian's python3-pytest-xdist (for /usr/bin/python3), through apt as
# root. Safe to run again; without root or apt it says so and the tests
# skip, saying why.
set -euo pipefail
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -c 'import xdist, pytest' 2>/dev/null; then exit 0; fi
done
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-python-xdist: no Python has pytest-xdist and apt-get (as root) is not available: the xdist tests will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-pytest-xdist >/dev/null
