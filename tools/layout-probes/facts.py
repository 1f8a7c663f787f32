# Run by tools/gen-layouts.py under each CPython being tabled (python -I):
# prints, as JSON, what the interpreter says about itself (version, digit
# size, opcode numbers, CO_* flags).  Must stay valid Python 3.6.

import inspect, json, opcode, sys, sysconfig
ops = {}
for src in ("opcode.opmap", "dis._all_opmap", "opcode._specialized_opmap"):
    mod, attr = src.split(".")
    try:
        ops.update(getattr(__import__(mod), attr))
    except AttributeError:
        pass
json.dump({
    "version": list(sys.version_info[:3]),
    "hexversion": sys.hexversion,
    "free_threaded": int(sysconfig.get_config_var("Py_GIL_DISABLED") or 0),
    "bits_per_digit": sys.int_info.bits_per_digit,
    "opmap": ops,
    "co": {n: getattr(inspect, n) for n in (
        "CO_GENERATOR", "CO_COROUTINE", "CO_ASYNC_GENERATOR",
        "CO_ITERABLE_COROUTINE")},
}, sys.stdout)
