#!/usr/bin/env python3
"""Fails if a tracked file cites a document that is not in the repository.

The product specification and the research notes the code was first written from live outside the
repository, so a reader cannot follow a citation of their sections. Code, tests and docs state the
fact itself, or point at a document that is here (README.md, man/atlas2kudu.1, docs/, tests/kit/).
The patterns are spelled in pieces so that neither this file nor a grep for them finds them here.

Files checked: `git ls-files` in a git checkout, else every file under SOURCE_ROOT but .git and
build directories (build*/, or any directory meson set up). Each citation found is printed as
FILE:LINE: text.

Usage: check_citations.py SOURCE_ROOT
"""
import os, re, subprocess, sys

SPEC, RESEARCH, SECTION = 'SP' + 'EC', 'rese' + 'arch', '\u00a7'
CITATION = re.compile('|'.join([
    r'\b' + SPEC + r'\b',                       # the spec's name in capitals
    RESEARCH + r'\s*(:\s*)?' + SECTION,         # a section of the research notes
    RESEARCH + r'/',                            # their folder
    RESEARCH + r'\s+[\w-]+\.md',                # a research note by file name
    r'\b(atlas-notifications|impala-hs2-kudu|peers-and-style)\.md',  # the notes' file names
    r'\.\./' + 'shared/',                       # the folder outside the repository
]).encode())


def tracked_files(root):
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '-z'], capture_output=True,
                             check=True).stdout
        return [f.decode() for f in out.split(b'\0') if f]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith('build') and d != '.git' and
                       not os.path.isdir(os.path.join(dirpath, d, 'meson-private'))]
        files += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
    return sorted(files)


root = sys.argv[1]
me = os.path.realpath(__file__)
found = []
for rel in tracked_files(root):
    path = os.path.join(root, rel)
    if os.path.realpath(path) == me or not os.path.isfile(path):
        continue
    with open(path, 'rb') as f:
        data = f.read()
    if b'\0' in data[:8192]:
        continue  # binary
    for number, line in enumerate(data.split(b'\n'), 1):
        if CITATION.search(line):
            found.append(f'{rel}:{number}: {line.decode("utf-8", "replace").strip()[:160]}')

if found:
    print('Citations of documents that are not in the repository (state the fact itself, or point '
          'at README.md, man/atlas2kudu.1 or docs/):')
    print('\n'.join(found))
    sys.exit(1)
print(f'{root}: no citation of a document outside the repository')
