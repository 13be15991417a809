#!/usr/bin/env python3
"""Fails if a doctest executable has a test case outside the suites meson registers for it.

Usage: check_suites.py EXECUTABLE SUITE[,SUITE...]
"""
import re, subprocess, sys

exe, suites = sys.argv[1], sys.argv[2]
out = subprocess.run([exe, '--no-colors', '--list-test-cases', '--test-suite-exclude=' + suites],
                     capture_output=True, text=True, check=True).stdout
m = re.search(r'(\d+) tests? cases?', out) or re.search(r'unskipped test cases passing the current filters: (\d+)', out)
count = int(m.group(1)) if m else -1
if count != 0:
    print(out)
    print(f'{exe}: {count} test case(s) outside the registered suites {suites}')
    sys.exit(1)
print(f'{exe}: every test case is in one of {suites}')
