#!/usr/bin/env python3
"""The device's migration stream description against the one committed.

    tests/migration/vmstate-golden.py QEMU GOLDEN [--update]

Runs `QEMU -dump-vmstate` (each device's VMState: its fields, their sizes
and versions, its subsections) and compares rdma-sim's entry with GOLDEN,
a JSON file in the repository.  A difference means a guest migrated from
the committed device to this one, or back, would not load: say why in
the commit and bump the version or add a subsection, then write GOLDEN
anew with --update.  The size of `parent_obj` (QEMU's PCIDevice, which
changes between QEMU versions) is left out.  Prints the difference and
exits 1 if there is one.
"""
import difflib
import json
import subprocess
import sys
import tempfile


def normalized(entry):
    """entry with the sizes of QEMU's own parent objects left out."""
    if isinstance(entry, dict):
        out = {k: normalized(v) for k, v in entry.items()}
        if out.get("field") == "parent_obj":
            out.pop("size", None)
        return out
    if isinstance(entry, list):
        return [normalized(v) for v in entry]
    return entry


def dump(qemu):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([qemu, "-M", "pc", "-accel", "tcg", "-nodefaults",
                        "-display", "none", "-dump-vmstate", f.name],
                       check=True, capture_output=True, timeout=60)
        with open(f.name, encoding="utf-8") as g:
            states = json.load(g)
    if "rdma-sim" not in states:
        sys.exit("vmstate-golden: %s -dump-vmstate has no rdma-sim entry" % qemu)
    return json.dumps(normalized(states["rdma-sim"]), indent=1,
                      sort_keys=True) + "\n"


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--update"):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    qemu, golden = argv[0], argv[1]
    now = dump(qemu)
    if len(argv) == 3:
        with open(golden, "w", encoding="utf-8") as f:
            f.write(now)
        print("vmstate-golden: wrote %s" % golden)
        return 0
    with open(golden, encoding="utf-8") as f:
        then = f.read()
    if now == then:
        print("vmstate-golden: rdma-sim's VMState is the committed one (%s)" % golden)
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        then.splitlines(True), now.splitlines(True), golden, qemu + " -dump-vmstate"))
    print("vmstate-golden: rdma-sim's migration stream changed: bump its version "
          "or add a subsection, then %s QEMU %s --update" % (sys.argv[0], golden))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
