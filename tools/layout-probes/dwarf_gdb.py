# Run inside gdb (gdb -batch -nx -ex "source dwarf_gdb.py" ELF) by
# tools/gen-layouts.py: answers a batch of queries about the ELF file's
# DWARF.  Reads the queries (a JSON list) from $GEN_LAYOUTS_IN and writes
# {"build_id", "answers"} as JSON to $GEN_LAYOUTS_OUT.

import gdb, json, os

CODES = {}
for _n in dir(gdb):
    if _n.startswith("TYPE_CODE_"):
        CODES.setdefault(getattr(gdb, _n), _n[len("TYPE_CODE_"):])
AGGREGATE = (gdb.TYPE_CODE_STRUCT, gdb.TYPE_CODE_UNION)


def find_type(names):
    for n in names:
        try:
            t = gdb.lookup_type(n)
        except gdb.error:
            continue
        s = t.strip_typedefs()
        if s.code in AGGREGATE and s.sizeof == 0 and not s.fields():
            continue        # a declaration without a definition
        return n, s
    return None, None


def find_member(t, name):
    """(bit position, field) of member `name`, looking through anonymous
    struct and union members."""
    for f in t.fields():
        if f.name == name:
            return f.bitpos, f
    for f in t.fields():
        ft = f.type.strip_typedefs()
        if not f.name and ft.code in AGGREGATE:
            r = find_member(ft, name)
            if r is not None:
                return f.bitpos + r[0], r[1]
    return None


def member(names, path):
    tname, t = find_type(names)
    if t is None or t.code not in AGGREGATE:
        return None
    bitpos, cur, f = 0, t, None
    for part in path.split("."):
        if cur.code not in AGGREGATE:
            return None
        r = find_member(cur, part)
        if r is None:
            return None
        bitpos += r[0]
        f = r[1]
        cur = f.type.strip_typedefs()
    return {"type": tname, "bitpos": bitpos, "bitsize": f.bitsize,
            "code": CODES.get(cur.code, str(cur.code)), "size": cur.sizeof,
            "outer_size": t.sizeof}


def answer(q):
    kind = q[0]
    if kind == "sizeof":
        tname, t = find_type(q[1])
        return None if t is None else t.sizeof
    if kind == "member":
        return member(q[1], q[2])
    if kind == "enum":
        tname, t = find_type(q[1])
        if t is None or t.code != gdb.TYPE_CODE_ENUM:
            return None
        return {f.name: int(f.enumval) for f in t.fields()}
    raise ValueError(kind)


with open(os.environ["GEN_LAYOUTS_IN"]) as f:
    queries = json.load(f)
objfile = gdb.objfiles()[0] if gdb.objfiles() else None
out = {"build_id": objfile.build_id if objfile else None,
       "answers": [answer(q) for q in queries]}
with open(os.environ["GEN_LAYOUTS_OUT"], "w") as f:
    json.dump(out, f)
