"""A target's command line as the kernel gives it (its arguments joined
by spaces), escaped in the text as every string from a target is: an
escape sequence or a newline in an argument shows as \\x1b or \\n, not
as '?' or a space; the JSON has it as it is.
"""

import json

from conftest import run_coroscope

CODE = ("import json, os, sys, time\n"
        "with open(sys.argv[1] + '.tmp', 'w') as f:\n"
        "    json.dump({}, f)\n"
        "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
        "time.sleep(600)\n")
ARGS = ["\x1b[31mred", "two\nlines", "tab\there"]


def test_command_line_escaped(keeper, interp, tmp_path):
    ready = str(tmp_path / "ready.json")
    argv = [interp.path, "-c", CODE, ready] + ARGS
    t = keeper.start_with_ready(argv, ready, interp=interp,
                                workdir=str(tmp_path))
    res = run_coroscope("dump", "--json", t.pid)
    assert res.returncode == 0, res.stderr
    command = json.loads(res.stdout)["command"]
    assert command.endswith(" ".join([ready] + ARGS)), command
    text = run_coroscope("dump", t.pid)
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.endswith(" %s \\x1b[31mred two\\nlines tab\\there" % ready), \
        first
    assert "\x1b" not in text.stdout, first
