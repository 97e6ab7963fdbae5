#!/usr/bin/env python3
"""Counts the individual tests a suite's log reports, whatever ran them.

Usage: count_tests.py LOG EXIT_CODE -> prints "PASSED FAILED".

Recognised: GoogleTest's summary, pg_regress's, prove's (pgTAP and the
Perl TAP tests) and the oracle suites' "name: N passed, M failed". A suite
that exited non-zero with no failed test counted, or exited zero with no
test counted at all, counts as one failed test: a broken or silent suite
must never pass unnoticed.
"""
import re
import sys


def count(text):
    passed = failed = 0
    for line in text.splitlines():
        line = line.strip()
        m = re.match(r"^\[  PASSED  \] (\d+) tests?\.", line)
        if m:
            passed += int(m.group(1))
            continue
        m = re.match(r"^\[  FAILED  \] (\d+) tests?, listed below", line)
        if m:
            failed += int(m.group(1))
            continue
        m = re.search(r"All (\d+) tests passed", line)
        if m:
            passed += int(m.group(1))
            continue
        m = re.search(r"(\d+) of (\d+) tests failed", line)
        if m:
            failed += int(m.group(1))
            passed += int(m.group(2)) - int(m.group(1))
            continue
        m = re.match(r"^Files=\d+, Tests=(\d+),", line)
        if m:
            passed += int(m.group(1))  # failed subtests are taken off below
            continue
        m = re.search(r"Failed (\d+)/\d+ subtests", line)
        if m:
            failed += int(m.group(1))
            passed -= int(m.group(1))
            continue
        m = re.match(r"^[\w-]+: (\d+) passed, (\d+) failed$", line)
        if m:
            passed += int(m.group(1))
            failed += int(m.group(2))
    return max(passed, 0), failed


def main():
    with open(sys.argv[1], errors="replace") as f:
        passed, failed = count(f.read())
    rc = int(sys.argv[2])
    if (rc != 0 and failed == 0) or (rc == 0 and passed + failed == 0):
        failed += 1
    print(passed, failed)


if __name__ == "__main__":
    main()
