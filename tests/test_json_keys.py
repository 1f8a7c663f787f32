"""The JSON writer copies a key given as a literal (json_key) without
escaping it: every literal the sources pass must be plain printable
ASCII without a quote or a backslash, and the macro must let nothing
else through."""
import glob
import os
import re
import subprocess

from conftest import REPO_DIR

KEY_CALL = re.compile(r'\bjson_key(?:_int|_addr|_string)?\(\s*[^,]+,'
                      r'\s*("(?:[^"\\]|\\.)*")\s*[,)]')


def sources():
    for pattern in ("cli/*.c", "cli/*.h", "tests/unit/*.c"):
        for path in sorted(glob.glob(os.path.join(REPO_DIR, pattern))):
            with open(path, encoding="utf-8") as f:
                yield path, f.read()


def test_every_literal_key_is_plain():
    seen = 0
    for path, text in sources():
        for m in KEY_CALL.finditer(text):
            body = m.group(1)[1:-1]
            seen += 1
            assert body and all(0x20 <= ord(c) < 0x7f and c not in '"\\'
                                for c in body), (path, m.group(0))
    # The dump writer alone has dozens; finding none means the pattern
    # no longer matches the sources.
    assert seen > 100, seen


def test_a_runtime_key_does_not_compile(tmp_path):
    src = tmp_path / "k.c"
    src.write_text('#include "cli/json.h"\n'
                   'void f(struct json *j, const char *k);\n'
                   'void f(struct json *j, const char *k)'
                   ' { json_key(j, k); }\n')
    res = subprocess.run(["cc", "-std=c11", "-I", REPO_DIR, "-c",
                          str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    assert res.returncode != 0, "json_key accepted a non-literal key"
    src.write_text('#include "cli/json.h"\n'
                   'void f(struct json *j);\n'
                   'void f(struct json *j) { json_key(j, "plain"); }\n')
    res = subprocess.run(["cc", "-std=c11", "-I", REPO_DIR, "-c",
                          str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
