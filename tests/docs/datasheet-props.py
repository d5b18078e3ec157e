#!/usr/bin/env python3
"""Check docs/datasheet.md section 2 against the device's own properties.

    tests/docs/datasheet-props.py QEMU DATASHEET

Runs `QEMU -device rdma-sim,help` and compares the default and range (the
"; MIN..MAX" ending a description) of every rdma-sim property with the
datasheet's table: the same properties, defaults and ranges.  Prints each
mismatch and exits 1 if there is any.
"""
import re
import subprocess
import sys


def device_props(qemu):
    out = subprocess.run([qemu, '-device', 'rdma-sim,help'], check=True,
                         capture_output=True, text=True, timeout=60).stdout
    props = {}
    for line in out.splitlines():
        m = re.match(r'^\s+([a-z0-9-]+)=<(\w+)>\s+-\s*(.*)$', line)
        if not m:
            continue
        name, desc = m.group(1), m.group(3)
        d = re.search(r'\(default: ([^)]*)\)\s*$', desc)
        r = re.search(r'; (\d+)\.\.(\d+)', desc)
        props[name] = (d.group(1) if d else None,
                       '%s..%s' % r.groups() if r else 'any')
    return props


def datasheet_props(path):
    text = open(path, encoding='utf-8').read()
    sec = re.search(r'^## 2\. .*?$(.*?)^## 3\. ', text, re.S | re.M)
    if not sec:
        sys.exit(f'{path}: no section 2 followed by section 3')
    props = {}
    for line in sec.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 3 or not re.fullmatch(r'`[a-z0-9-]+`', cells[0]):
            continue
        props[cells[0].strip('`')] = (cells[1], cells[2])
    return props


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dev = device_props(sys.argv[1])
    doc = datasheet_props(sys.argv[2])
    # Ours are those with a range; QEMU's own PCI and NIC properties (addr,
    # romfile, netdev, mac...) have none and are described by QEMU.
    ours = {n for n, v in dev.items() if v[1] != 'any'}
    doc.pop('netdev', None)
    bad = []
    for name in sorted(ours | set(doc)):
        if name not in doc:
            bad.append(f'{name}: a device property the datasheet does not list')
        elif name not in dev:
            bad.append(f'{name}: in the datasheet, not a device property')
        elif dev[name] != doc[name]:
            bad.append(f'{name}: datasheet says default {doc[name][0]}, range '
                       f'{doc[name][1]}; the device has default '
                       f'{dev[name][0]}, range {dev[name][1]}')
    for b in bad:
        print(b)
    print(f'{len(ours | set(doc))} properties compared, {len(bad)} mismatches')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
