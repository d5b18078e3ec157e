#!/usr/bin/env python3
"""The series of patches/qemu for each QEMU version, and its lint.

patches/qemu/NNNN-*.patch is one series, written for QEMU 7.2.  A hunk
whose context differs in a later QEMU (the same lines added and removed,
around other lines) is kept again in patches/qemu/VERSION/NNNN-*.patch,
the file of the same name in the directory of the first version that
needs it; that file holds only such hunks, under the headers of their
files.  The series for QEMU V is the common one with each hunk replaced
by the copy in the highest VERSION/ directory at or below V that has one
(a hunk written for 10.0 serves 10.2 too until a 10.2/ copy replaces
it).  A patch in VERSION/ with no common patch of its name is for that
version and later alone, whole.

  qemu-patches.py series DIR VERSION OUTDIR
      write the series for VERSION into OUTDIR, one file per patch, and
      print their paths in order (scripts/qemu-tree.sh applies them)
  qemu-patches.py check DIR [--trees-in BUILD] [TREE...]
      the lint: every hunk in a VERSION/ copy makes the same change as
      exactly one hunk of the common patch, in another context than the
      one it replaces; and for each QEMU source TREE (its VERSION file
      says which QEMU it is), the series for that version applies
      without fuzz to the tree's files as they were before the series
      went in (--trees-in: each BUILD/qemu-*/ with a VERSION file and a
      configure script, the trees make fetched).  Prints "PASS name",
      "FAIL name (why)" or "SKIP name (why)" lines; exits 1 if anything
      failed.  Reads and writes only
      copies of the few files the series changes: it takes a second.
  qemu-patches.py split DIR VERSION PATCH...
      for a new version or a rebase: from whole patches written for
      VERSION (named as the common ones), write into DIR/VERSION/ just
      the hunks that differ from those the version takes already
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
VERSION_DIR = re.compile(r"^\d+\.\d+$")


class PatchError(Exception):
    pass


def vkey(version):
    return tuple(int(x) for x in version.split("."))


class Hunk:
    def __init__(self, lines, where):
        self.lines = lines          # the @@ line and the body, with newlines
        self.where = where          # "file.patch:line" for messages

    def change(self):
        """The lines it removes and adds: what it does, whatever the context"""
        return tuple(l for l in self.lines[1:] if l[:1] in "+-\\")

    def context(self):
        return [l for l in self.lines[1:] if l[:1] not in "+-\\"]

    def start(self):
        return self.lines[0].split("@@")[1].strip()


class FileDiff:
    def __init__(self, header, name):
        self.header = header        # the lines before the first hunk
        self.name = name            # the path it patches, from "+++ b/..."
        self.hunks = []


class Patch:
    """A unified diff: free text (the commit message), then file diffs"""

    def __init__(self, path, label=None):
        self.path = path
        self.label = label or os.path.basename(path)
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        self.preamble = []
        self.files = []
        self.trailer = []
        i = 0
        # optional "diff --git" / "index" / mode lines before a file's ---
        pending = []
        while i < len(lines):
            line = lines[i]
            if (line.startswith("--- ") and i + 1 < len(lines)
                    and lines[i + 1].startswith("+++ ")):
                name = lines[i + 1][4:].split("\t")[0].strip()
                if name.startswith("b/"):
                    name = name[2:]
                fd = FileDiff(pending + [line, lines[i + 1]], name)
                pending = []
                self.files.append(fd)
                i += 2
                while i < len(lines) and lines[i].startswith("@@"):
                    i = self._hunk(lines, i, fd)
                continue
            if self.files and (line.startswith("diff ") or pending):
                pending.append(line)
            elif self.files:
                self.trailer.append(line)
            else:
                self.preamble.append(line)
            i += 1
        self.trailer = pending + self.trailer
        if not self.files:
            raise PatchError(f"{path}: no file diff in it (not a unified diff?)")

    def _hunk(self, lines, i, fd):
        m = HUNK.match(lines[i])
        if not m:
            raise PatchError(f"{self.path}:{i + 1}: malformed hunk header")
        old = int(m.group(2) or 1)
        new = int(m.group(4) or 1)
        body = [lines[i]]
        j = i + 1
        while old > 0 or new > 0:
            if j >= len(lines):
                raise PatchError(f"{self.path}:{i + 1}: hunk ends early")
            line = lines[j]
            if line.startswith(" ") or line == "\n":
                old -= 1
                new -= 1
            elif line.startswith("-"):
                old -= 1
            elif line.startswith("+"):
                new -= 1
            elif not line.startswith("\\"):
                raise PatchError(f"{self.path}:{j + 1}: line in hunk starts with {line[:1]!r}")
            body.append(line)
            j += 1
        while j < len(lines) and lines[j].startswith("\\"):
            body.append(lines[j])
            j += 1
        fd.hunks.append(Hunk(body, f"{self.label}:{i + 1}"))
        return j

    def text(self):
        out = list(self.preamble)
        for fd in self.files:
            out += fd.header
            for h in fd.hunks:
                out += h.lines
        return "".join(out + self.trailer)


def version_dirs(top):
    """The VERSION/ directories, oldest first"""
    return sorted((d for d in os.listdir(top)
                   if VERSION_DIR.match(d) and os.path.isdir(os.path.join(top, d))),
                  key=vkey)


def names(directory):
    if not os.path.isdir(directory):
        return []
    return sorted(n for n in os.listdir(directory) if n.endswith(".patch"))


def match_hunks(common, copy):
    """For each hunk of the copy (a VERSION/ file), the (file, index) of the
    common patch's hunk making the same change.  Where the common patch
    makes that change more than once in a file, the hunk whose context has
    the most lines in common with the copy's; PatchError if none does, or
    if two do as well."""
    by_change = {}
    for fd in common.files:
        for k, h in enumerate(fd.hunks):
            by_change.setdefault((fd.name, h.change()), []).append((fd.name, k, h))
    out = []
    for fd in copy.files:
        for h in fd.hunks:
            found = by_change.get((fd.name, h.change()), [])
            if len(found) > 1:
                score = [(len(set(h.context()) & set(c.context())), (name, k))
                         for name, k, c in found]
                score.sort(reverse=True)
                if score[0][0] > score[1][0]:
                    out.append((score[0][1], h))
                    continue
            elif found:
                out.append((found[0][:2], h))
                continue
            why = ("makes a change that no hunk of" if not found
                   else "makes the same change as more than one hunk of")
            raise PatchError(
                f"{h.where} ({fd.name}, @@ {h.start()} @@) {why} "
                f"{common.label}: a copy adds and removes the same lines as "
                f"the common hunk it replaces; change both, or write the copy "
                f"again from the common hunk")
    return out


def layers(top, n, common, upto=None):
    """For the common patch n: each VERSION/ directory (oldest first, up to
    and with `upto`) that has a copy of it, with the copy's hunks as
    match_hunks pairs them"""
    for d in version_dirs(top):
        path = os.path.join(top, d, n)
        if upto and vkey(d) > vkey(upto):
            break
        if os.path.exists(path):
            yield d, match_hunks(common, Patch(path, f"{d}/{n}"))


def hunks_of(common):
    return {(fd.name, k): h for fd in common.files for k, h in enumerate(fd.hunks)}


def series(top, version):
    """[(name, Patch, [versions whose hunks it took])] for QEMU `version`"""
    dirs = [d for d in version_dirs(top) if vkey(d) <= vkey(version)]
    result = []
    own = {n: d for d in dirs for n in names(os.path.join(top, d))
           if not os.path.exists(os.path.join(top, n))}
    for n in sorted(set(names(top)) | set(own)):
        if n in own:
            result.append((n, Patch(os.path.join(top, own[n], n), f"{own[n]}/{n}"),
                           [own[n]]))
            continue
        patch = Patch(os.path.join(top, n))
        files = {fd.name: fd for fd in patch.files}
        used = []
        for d, pairs in layers(top, n, Patch(os.path.join(top, n)), version):
            for (name, k), h in pairs:
                files[name].hunks[k] = h
            used.append(d)
        result.append((n, patch, used))
    return result


def cmd_series(top, version, outdir):
    os.makedirs(outdir, exist_ok=True)
    for n, patch, _ in series(top, version):
        path = os.path.join(outdir, n)
        with open(path, "w", encoding="utf-8") as f:
            f.write(patch.text())
        print(path)


def cmd_split(top, version, fulls):
    """From whole patches written for `version` (a series that applies to
    it), keep in DIR/VERSION/ only the hunks that differ from those the
    version takes already; a file's first lines (what the copies are for)
    stay as they are, new files get a line to say it."""
    for full in fulls:
        n = os.path.basename(full)
        if not os.path.exists(os.path.join(top, n)):
            raise PatchError(f"{full}: no {n} in {top} to keep hunks of")
        common = Patch(os.path.join(top, n))
        taken = hunks_of(common)
        for d, pairs in layers(top, n, common, version):
            if d != version:
                taken.update(pairs)
        out = []
        for fd in Patch(full).files:
            keep = [h for key, h in match_hunks(common, _only(fd, full))
                    if h.lines[1:] != taken[key].lines[1:]]
            if keep:
                out += [line for line in fd.header if line.startswith(("--- ", "+++ "))]
                for h in keep:
                    out += h.lines
        path = os.path.join(top, version, n)
        if not out:
            if os.path.exists(path):
                os.remove(path)
                print(f"removed {path}: QEMU {version} takes the hunks it had already")
            continue
        if os.path.exists(path):
            preamble = Patch(path).preamble
        else:
            preamble = [f"QEMU {version} and later: the hunks of ../{n}\n",
                        "whose context differs in this version (say how).\n", "\n"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(preamble + out))
        print(f"wrote {path}")


def _only(fd, path):
    """A Patch holding just the file diff fd"""
    p = Patch.__new__(Patch)
    p.path, p.label = path, os.path.basename(path)
    p.preamble, p.files, p.trailer = [], [fd], []
    return p


def run_patch(workdir, text, *args):
    return subprocess.run(["patch", "-d", workdir, "-p1", "-s", "-f", "-r", "-",
                           "--no-backup-if-mismatch", *args],
                          input=text, text=True, capture_output=True)


def check_hunks(top, report):
    """Each VERSION/ copy's hunks replace common ones making the same change,
    and each differs from the hunk the version would take without it"""
    problems = []
    for n in names(top):
        try:
            common = Patch(os.path.join(top, n))
            taken = {key: (h, n) for key, h in hunks_of(common).items()}
            for d, pairs in layers(top, n, common):
                for key, h in pairs:
                    old, origin = taken[key]
                    if h.lines[1:] == old.lines[1:]:
                        problems.append(f"{h.where}: the same hunk as in {origin}, "
                                        f"which QEMU {d} takes without it; remove it")
                    taken[key] = (h, f"{d}/{n}")
        except PatchError as e:
            problems.append(str(e))
    if problems:
        report("FAIL", "qemu-patches-hunks", "; ".join(problems))
    else:
        report("PASS", "qemu-patches-hunks", None)


def tree_version(tree):
    try:
        with open(os.path.join(tree, "VERSION"), encoding="utf-8") as f:
            v = f.read().strip()
    except OSError:
        return None
    m = re.match(r"^(\d+)\.(\d+)", v)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def check_tree(top, tree, version, report):
    """The series for `version` applies without fuzz to `tree` as it was
    before the series: the series' files are copied, the patches already in
    them (the last one that reverts marks how far, as qemu-tree.sh decides)
    taken out, and all of them applied again; the result must be the tree's
    files again when the whole series was in."""
    name = f"qemu-patches-{version}"
    try:
        patches = series(top, version)
    except PatchError as e:
        report("FAIL", name, str(e))
        return
    touched = sorted({fd.name for _, p, _ in patches for fd in p.files})
    with tempfile.TemporaryDirectory(prefix="qemu-patches.") as tmp:
        work = os.path.join(tmp, "tree")
        for f in touched:
            src = os.path.join(tree, f)
            if os.path.exists(src):
                os.makedirs(os.path.dirname(os.path.join(work, f)), exist_ok=True)
                shutil.copy2(src, os.path.join(work, f))
        os.makedirs(work, exist_ok=True)
        texts = [(n, p.text(), used) for n, p, used in patches]
        applied = 0
        for i in range(len(texts), 0, -1):
            if run_patch(work, texts[i - 1][1], "-R", "--dry-run").returncode == 0:
                applied = i
                break
        for n, text, _ in reversed(texts[:applied]):
            r = run_patch(work, text, "-R")
            if r.returncode != 0:
                report("FAIL", name, f"{tree} has {n} in it, but it does not come out "
                       f"again: {r.stdout.strip()} (a tree made with an older series? "
                       f"remove {tree} and run make QEMU_VERSION={version})")
                return
        before = {}
        for f in touched:
            if os.path.exists(os.path.join(tree, f)):
                with open(os.path.join(tree, f), "rb") as g:
                    before[f] = g.read()
        for n, text, used in texts:
            r = run_patch(work, text, "--fuzz=0")
            if r.returncode != 0:
                hunks = f" with the hunks of {', '.join(used)}/" if used else ""
                report("FAIL", name, f"{n}{hunks} does not apply to QEMU {version} "
                       f"({tree} before the series): {' '.join(r.stdout.split())}; "
                       f"write the hunks that differ into "
                       f"patches/qemu/{version}/{n} (patches/qemu/README.md)")
                return
        if applied == len(texts):
            for f, data in before.items():
                with open(os.path.join(work, f), "rb") as g:
                    if g.read() != data:
                        report("FAIL", name, f"{tree}/{f} differs from what the series "
                               f"makes of it: edited by hand? remove {tree} and run "
                               f"make QEMU_VERSION={version}")
                        return
        report("PASS", name, None)


def cmd_check(top, trees):
    failed = False

    def report(status, name, why):
        nonlocal failed
        failed |= status == "FAIL"
        print(f"{status} {name}" + (f" ({why})" if why else ""))

    check_hunks(top, report)
    seen = set()
    trees = list(dict.fromkeys(os.path.realpath(t) for t in trees))
    for tree in trees:
        version = tree_version(tree)
        if not version:
            report("FAIL", f"qemu-patches-{os.path.basename(tree)}",
                   f"{tree}/VERSION does not say which QEMU it is")
            continue
        seen.add(version)
        check_tree(top, tree, version, report)
    for d in version_dirs(top):
        if d not in seen:
            report("SKIP", f"qemu-patches-{d}",
                   f"no QEMU {d} source tree to check against; make QEMU_VERSION={d} fetches one")
    return 1 if failed else 0


def main(argv):
    try:
        if len(argv) == 5 and argv[1] == "series":
            cmd_series(argv[2], argv[3], argv[4])
            return 0
        if len(argv) >= 5 and argv[1] == "split":
            cmd_split(argv[2], argv[3], argv[4:])
            return 0
        if len(argv) >= 3 and argv[1] == "check":
            trees = argv[3:]
            if trees[:1] == ["--trees-in"] and len(trees) >= 2:
                build = trees[1]
                found = sorted(os.path.join(build, d) for d in
                               (os.listdir(build) if os.path.isdir(build) else [])
                               if d.startswith("qemu-")
                               and os.path.isfile(os.path.join(build, d, "VERSION"))
                               and os.path.isfile(os.path.join(build, d, "configure")))
                trees = found + trees[2:]
            return cmd_check(argv[2], trees)
    except (PatchError, OSError) as e:
        print(f"qemu-patches.py: error: {e}", file=sys.stderr)
        return 1
    print("usage: qemu-patches.py series DIR VERSION OUTDIR"
          " | check DIR [--trees-in BUILD] [TREE...]"
          " | split DIR VERSION PATCH...",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
