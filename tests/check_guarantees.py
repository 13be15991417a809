#!/usr/bin/env python3
"""Fails if README's "Guarantees" section names a test that does not exist.

Each guarantee names its tests as **suite** `test case name`; every one must be a test case of
that doctest suite in one of the given executables.

Usage: check_guarantees.py README.md EXECUTABLE...
"""
import re, subprocess, sys

readme, exes = sys.argv[1], sys.argv[2:]
text = open(readme, encoding='utf-8').read()
section = text[text.index('## Guarantees'):]
section = section[:section.index('\n## ', 1)] if '\n## ' in section[1:] else section
refs = [r for r in re.findall(r'\*\*([a-z_0-9]+)\*\* `([^`]+)`', section) if r[0] != 'suite']
if not refs:
    sys.exit('README: no tests named in the Guarantees section')
missing = []
for suite, name in refs:
    found = False
    for exe in exes:
        out = subprocess.run([exe, '--no-colors', '--list-test-cases', '--test-suite=' + suite],
                             capture_output=True, text=True, check=True).stdout
        if name in (line.strip() for line in out.splitlines()):
            found = True
            break
    if not found:
        missing.append(f'{suite}: {name}')
if missing:
    print('README Guarantees names tests that do not exist:\n  ' + '\n  '.join(missing))
    sys.exit(1)
print(f'README Guarantees: {len(refs)} tests named, all exist')
