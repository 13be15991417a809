#!/usr/bin/env python3
r"""Fails if the man page and the program's --help disagree about the options.

Every option (long and short) that `atlas2kudu --help` and `atlas2kudu SUBCOMMAND --help` print
must be documented in the man page as --help spells it, and every option the man page documents
must be one that some --help prints (so the binary accepts it; "_" and "-" between words are the
same to the binary). Also: the man page's .TH names the version that
`atlas2kudu --version` prints, and groff formats the page without a warning.

The man page documents an option where it writes it in bold at the start of a macro argument:
`.B \-\-ssl`, `.BI \-\-max\-rejects " N" ", \-\-reject\-file " F`, `.BR \-q ", " \-\-quiet`,
`.RB ( \-s ", " \-b )`, or inline `\fB\-\-foo\fR`. Text such as `.B kinit \-kt` or
`.BR "kcat \-J"` is another program's option and is not counted; `\-\-max\-split\-*` stands
for every option with that prefix.

Usage: check_man_options.py ATLAS2KUDU MAN_PAGE
"""
import re, shutil, subprocess, sys

SUBCOMMANDS = ['check', 'compile', 'apply', 'ddl', 'digest']
OPTION = re.compile(r'(?<![\w-])--?[A-Za-z][\w-]*(\*)?')


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'{" ".join(args)}: exit {p.returncode}\n{p.stdout}{p.stderr}')
    return p.stdout


def help_options(text):
    """Option names of a CLI11 --help: lines "  -d,--database TEXT ..." (two spaces in)."""
    names = set()
    for line in text.splitlines():
        m = re.match(r'  (-[^\s]+)', line)
        if not m:
            continue
        for part in m.group(1).split(','):
            if re.fullmatch(r'--?[A-Za-z][\w-]*', part):
                names.add(part)
    return names


def roff_arguments(rest):
    """The arguments of a macro line: words, or "quoted strings" ("" is a quote inside one)."""
    args, i = [], 0
    while i < len(rest):
        if rest[i] in ' \t':
            i += 1
        elif rest[i] == '"':
            j, buf = i + 1, ''
            while j < len(rest):
                if rest.startswith('""', j):
                    buf, j = buf + '"', j + 2
                elif rest[j] == '"':
                    break
                else:
                    buf, j = buf + rest[j], j + 1
            args.append(buf)
            i = j + 1
        else:
            j = i
            while j < len(rest) and rest[j] not in ' \t':
                j += 1
            args.append(rest[i:j])
            i = j
    return args


def documented(piece):
    """Options in one bold piece of text that starts with an option (after punctuation)."""
    text = piece.replace('\\-', '-').replace('\\(em', ' ').replace('\\ ', ' ')
    if not re.match(r'[\s,;:(\[|]*--?[A-Za-z]', text):
        return []
    return [m.group(0) for m in OPTION.finditer(text)]


def man_options(path):
    found = {}  # option -> first line number
    for number, line in enumerate(open(path, encoding='utf-8'), 1):
        line = line.rstrip('\n')
        pieces = []
        m = re.match(r'\.(B|BI|BR|IB|RB)\s+(.*)', line)
        if m:
            macro, args = m.group(1), roff_arguments(m.group(2))
            if macro == 'B':
                pieces.append(' '.join(args))  # one bold text
            else:  # alternating fonts: the bold arguments are the even ones for B*, odd for *B
                first_bold = 0 if macro[0] == 'B' else 1
                pieces += args[first_bold::2]
        pieces += re.findall(r'\\fB(.*?)\\f[RPI]', line)
        for piece in pieces:
            for name in documented(piece):
                found.setdefault(name, number)
    return found


binary, man_page = sys.argv[1], sys.argv[2]
problems = []

in_help = {}  # option -> the --help commands that print it
for command in [[]] + [[s] for s in SUBCOMMANDS]:
    for name in help_options(run([binary] + command + ['--help'])):
        in_help.setdefault(name, []).append(' '.join(['atlas2kudu'] + command + ['--help']))

in_man = man_options(man_page)
wildcards = [n[:-1] for n in in_man if n.endswith('*')]

for name in sorted(in_help):
    if name not in in_man and not any(name.startswith(w) for w in wildcards):
        problems.append(f'{name}: printed by {", ".join(in_help[name])} but not in {man_page}')
# The binary accepts every long option with "_" or "-" between words (--ca-cert is --ca_cert).
def spelled_with_dashes(name):
    return '--' + name[2:].replace('_', '-') if name.startswith('--') else name


dashed_help = {spelled_with_dashes(n) for n in in_help}
for name, number in sorted(in_man.items()):
    if name.endswith('*'):
        if not any(h.startswith(name[:-1]) for h in in_help):
            problems.append(f'{man_page}:{number}: {name} matches no option of any --help')
    elif name not in in_help and spelled_with_dashes(name) not in dashed_help:
        problems.append(f'{man_page}:{number}: {name} is documented but no --help prints it')

# The version in .TH is the program's.
version = run([binary, '--version']).split()[1]  # "atlas2kudu 0.1.0 (...)"
th = next((l for l in open(man_page, encoding='utf-8') if l.startswith('.TH ')), '')
if f'atlas2kudu {version}' not in th:
    problems.append(f'{man_page}: .TH names another version than atlas2kudu --version '
                    f'({version}): {th.strip()}')

# groff formats it without warnings (-ww: all of them).
groff = shutil.which('groff')
if groff:
    p = subprocess.run([groff, '-man', '-Tutf8', '-ww', '-z', man_page], capture_output=True,
                       text=True)
    if p.returncode != 0 or p.stderr.strip():
        problems.append(f'groff -man -Tutf8 -ww {man_page}:\n{p.stderr.strip()}')
else:
    problems.append('groff not found (Debian package groff-base; scripts/setup.sh installs it)')

if problems:
    print('\n'.join(problems))
    sys.exit(1)
print(f'{man_page}: the {len(in_help)} options of every --help are documented, and every '
      f'documented option exists; groff has no warning')
