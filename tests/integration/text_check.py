#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks what a person reads or a program loads of gtrace-bpf's outputs.

  text_check.py KIND FILE [FILE ...]      KIND: text, csv, json, jsonl

Every file must be valid UTF-8 (a strict decoder), and hold no control
character but the line break: no C0 (ESC, BEL, CR, tab...), no DEL, no C1
(U+0080..U+009F, CSI among them), whatever the traced programs named
their kernels, processes and NVTX ranges.  csv: every cell that starts
with = + - @ (or a tab or CR) is a number, or starts with an apostrophe
(a formula made text).  json: the file is one JSON document; jsonl: one
per line.  Prints one line per problem (the first 10 of a file) and exits
1 when there is any.
"""
import csv
import io
import json
import re
import sys

CONTROL = re.compile('[\x00-\x09\x0b-\x1f\x7f-\x9f]')
NUMBER = re.compile(r'[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?')


def problems(kind, path):
    data = open(path, 'rb').read()
    try:
        text = data.decode('utf-8', 'strict')
    except UnicodeDecodeError as e:
        yield 'not UTF-8 at byte %d: %r' % (e.start, data[max(0, e.start - 20):e.start + 8])
        text = data.decode('utf-8', 'replace')
    for m in CONTROL.finditer(text):
        yield 'control character U+%04X at %d: %r' % (ord(m.group()), m.start(),
                                                       text[max(0, m.start() - 20):m.start() + 8])
    if kind == 'csv':
        for row in csv.reader(io.StringIO(text)):
            for cell in row:
                if cell and cell[0] in '=+-@\t\r' and not NUMBER.fullmatch(cell):
                    yield 'CSV cell that a spreadsheet takes for a formula: %r' % cell[:60]
    elif kind == 'json':
        try:
            json.loads(text)
        except ValueError as e:
            yield 'not JSON: %s' % e
    elif kind == 'jsonl':
        for i, line in enumerate(text.splitlines()):
            try:
                json.loads(line)
            except ValueError as e:
                yield 'line %d is not JSON: %s' % (i + 1, e)


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('text', 'csv', 'json', 'jsonl'):
        sys.stderr.write('usage: text_check.py text|csv|json|jsonl FILE...\n')
        return 2
    bad = 0
    for path in sys.argv[2:]:
        for i, p in enumerate(problems(sys.argv[1], path)):
            bad += 1
            if i < 10:
                print('%s: %s' % (path, p))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
