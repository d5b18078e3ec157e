#!/usr/bin/env python3
"""Call cycles between the files of a C directory.

    scripts/call-cycles.py [--allow-files N] DIR...

A module is a file's name without its extension (transport.c and
transport.h are the module transport).  Module A depends on module B when
code of A - a function's body, or a macro's - names a function whose
definition with external linkage is in B (a call, or its address taken
for a callback), or a static inline function defined in B's header.  Each
set of modules that depend on one another in a circle (a strongly
connected component of that graph) is printed with the references that
close it, the caller and the callee named.  Exit status: 1 when the sets
of a directory have more than N files in all (default 0: no cycle), else
0; 2 on misuse.  N above 0 is a ratchet for a tree that still has cycles:
they may shrink, never grow; within it only their count is printed.

The C is read with a tokenizer, not a compiler: comments, strings and
character constants are dropped; a definition is a name followed by a
parameter list and a body at the file's outermost level.  That is enough
for code in QEMU's and the kernel's style (the return type, the name and
its parameters on one declaration, the body after it), which checkpatch
holds both trees to.
"""

import os
import re
import sys

TOKEN = re.compile(r"""
    (?P<skip>/\*.*?\*/ | //[^\n]* | "(?:\\.|[^"\\])*" | '(?:\\.|[^'\\])*')
  | (?P<define>^[ \t]*\#[ \t]*define[ \t]+(?:[^\n\\]|\\.)*)
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.)*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<punct>[{}()\[\];,=])
""", re.S | re.X | re.M)
MACRO = re.compile(r"[ \t]*\#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)", re.S)

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do",
            "else", "case", "typeof", "__typeof__", "defined",
            "_Static_assert", "QEMU_BUILD_BUG_ON", "offsetof"}


def tokens(text):
    """The file's tokens: ('name', word) or ('punct', char); a #define is
    ('macro', its name), its body's tokens, ('end', ''); other directives,
    comments and literals are dropped."""
    out = []
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind in ("skip", "pp"):
            continue
        if kind == "define":
            d = MACRO.match(m.group(kind))
            out.append(("macro", d.group(1)))
            out += [t for t in tokens(d.group(3)) if t[0] in ("name", "punct")]
            out.append(("end", ""))
            continue
        out.append((kind, m.group(kind)))
    return out


def parse(path):
    """(definitions, references) of one file.  definitions: name ->
    'extern' | 'static' | 'inline'; references: (where, name), where is the
    function, macro or object whose code or initializer names it."""
    with open(path, encoding="utf-8", errors="replace") as f:
        toks = tokens(f.read())
    defs = {}
    refs = []
    depth = 0
    current = None          # the function or object whose body we are in
    decl = []               # the tokens of the declaration at depth 0
    macro = None            # the #define whose body we are in
    for kind, word in toks:
        if kind == "macro":
            macro = "#define " + word
            continue
        if kind == "end":
            macro = None
            continue
        if macro is not None:
            if kind == "name" and word not in KEYWORDS:
                refs.append((macro, word))
            continue
        if kind == "punct" and word == "{":
            if depth == 0:
                fn = definition(decl)
                if fn:
                    name, linkage = fn
                    defs.setdefault(name, linkage)
                    current = name
                else:
                    names = [w for w in decl if w not in "()="]
                    current = names[-1] if names else None
            depth += 1
        elif kind == "punct" and word == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                current = None
                decl = []
        elif depth == 0 and kind == "punct" and word == ";":
            decl = []
        elif depth == 0:
            if kind == "name" or word in "()=":
                decl.append(word)
            # an initializer without braces names functions too
            if kind == "name" and "=" in decl and word not in KEYWORDS:
                refs.append((decl[0] if decl else None, word))
        elif kind == "name" and word not in KEYWORDS:
            refs.append((current, word))
    return defs, refs


def definition(decl):
    """The name and linkage of the function a declaration that is followed
    by a body defines, or None (a struct, an initializer, ...)."""
    if "(" not in decl or "=" in decl:
        return None
    k = decl.index("(")
    if k == 0:
        return None
    name = decl[k - 1]
    if name in KEYWORDS or not re.match(r"[A-Za-z_]\w*$", name):
        return None
    head = decl[:k - 1]
    if any(w in ("struct", "union", "enum") for w in head[-1:]):
        return None
    if "static" in head:
        return name, ("inline" if "inline" in head else "static")
    return name, "extern"


def module(path):
    return os.path.splitext(os.path.basename(path))[0]


def scc(nodes, edges):
    """Tarjan's strongly connected components of the graph."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check(directory):
    """The cycles of one directory: a list of (modules, references)."""
    files = sorted(os.path.join(directory, f) for f in os.listdir(directory)
                   if f.endswith((".c", ".h")))
    parsed = {f: parse(f) for f in files}
    owner = {}              # function name -> module that defines it
    for f, (defs, _) in parsed.items():
        for name, linkage in defs.items():
            if linkage == "extern" or (linkage == "inline" and f.endswith(".h")):
                owner.setdefault(name, module(f))
    edges, why = {}, {}
    for f, (defs, refs) in parsed.items():
        mine = module(f)
        local = {n for n, linkage in defs.items() if linkage == "static"}
        for fn, name in refs:
            if name in local or name not in owner or owner[name] == mine:
                continue
            edges.setdefault(mine, set()).add(owner[name])
            why.setdefault((mine, owner[name]), []).append((fn, name))
    nodes = {module(f) for f in files}
    cycles = []
    for comp in scc(nodes, edges):
        if len(comp) < 2:
            continue
        inside = [(a, b, why[(a, b)]) for a in comp for b in sorted(edges.get(a, ()))
                  if b in comp]
        cycles.append((comp, inside))
    return cycles


def main(argv):
    allow = 0
    if len(argv) >= 2 and argv[0] == "--allow-files":
        allow = int(argv[1])
        argv = argv[2:]
    if not argv or any(not os.path.isdir(d) for d in argv):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    status = 0
    for path in argv:
        cycles = check(path)
        d = os.path.relpath(path)
        files = sum(len(comp) for comp, _ in cycles)
        # within the allowance, the count alone (make cycles shows them)
        for comp, inside in cycles if files > allow else []:
            print(f"{d}: call cycle between {len(comp)} files: {', '.join(comp)}")
            for a, b, refs in inside:
                shown = ", ".join(f"{fn or '?'} -> {name}" for fn, name in refs[:3])
                more = f" (+{len(refs) - 3} more)" if len(refs) > 3 else ""
                print(f"    {a} -> {b}: {shown}{more}")
        print(f"{d}: {len(cycles)} call cycle(s) between files, {files} files in them")
        if files > allow:
            print(f"{d}: more than {allow} files in call cycles", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
