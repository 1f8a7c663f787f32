"""man/coroscope.1 documents every option and every exit status."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO_DIR, run_coroscope

MANPAGE = os.path.join(REPO_DIR, "man", "coroscope.1")
ERROR_H = os.path.join(REPO_DIR, "common", "error.h")
SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
            "ENVIRONMENT", "EXAMPLES", "NOTES", "SEE ALSO")


def manpage_source():
    assert os.path.exists(MANPAGE), "%s is missing" % MANPAGE
    with open(MANPAGE, encoding="utf-8") as f:
        return f.read()


def plain(roff):
    """roff source with font escapes removed and \\- turned into -."""
    text = re.sub(r"\\f(\[[^\]]*\]|\(..|.)", "", roff)
    text = text.replace("\\-", "-").replace("\\&", "")
    return text


def sections(roff):
    """{SECTION NAME: body} from .SH requests."""
    found, name, body = {}, None, []
    for line in roff.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*?)"?\s*$', line)
        if m:
            if name is not None:
                found[name] = "\n".join(body)
            name, body = m.group(1).strip().upper(), []
        elif name is not None:
            body.append(line)
    if name is not None:
        found[name] = "\n".join(body)
    return found


def help_long_options():
    options = set()
    for args in (["--help"], ["dump", "--help"]):
        res = run_coroscope(*args)
        assert res.returncode == 0, res
        options.update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", res.stdout))
    assert options, "no long options in --help"
    return sorted(options)


def exit_statuses():
    with open(ERROR_H) as f:
        text = f.read()
    m = re.search(r"enum\s+cs_status\s*\{(.*?)\}", text, re.S)
    assert m, "no enum cs_status in %s" % ERROR_H
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    values = [int(v) for v in re.findall(r"=\s*(\d+)", body)]
    assert values, "no values in enum cs_status"
    return values


def test_manpage_has_standard_sections():
    found = sections(manpage_source())
    missing = [s for s in SECTIONS if s not in found]
    assert not missing, "man page lacks sections %s" % missing


def test_every_help_option_is_documented():
    text = plain(manpage_source())
    missing = [opt for opt in help_long_options()
               if not re.search(re.escape(opt) + r"(?![a-z0-9-])", text)]
    assert not missing, "options in --help but not in the man page: %s" % (
        missing,)


def test_every_exit_status_is_documented():
    found = sections(manpage_source())
    assert "EXIT STATUS" in found, "man page has no EXIT STATUS section"
    body = plain(found["EXIT STATUS"])
    missing = [v for v in exit_statuses()
               if not re.search(r"(?<![\w.])%d(?![\w.])" % v, body)]
    assert not missing, "exit statuses missing from EXIT STATUS: %s" % missing


def test_manpage_renders_without_warnings():
    if shutil.which("groff") is None:
        pytest.skip("groff is not installed")
    manpage_source()
    out = subprocess.run(["groff", "-k", "-man", "-Tutf8", "-ww", "-z",
                          MANPAGE],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60,
                         env=dict(os.environ, LC_ALL="C.UTF-8"))
    assert out.returncode == 0 and out.stderr == "", out.stderr


def test_every_error_code_maps_to_a_documented_status():
    """cli_exit_status()'s table (cli/main.c) covers every code of
    common/error.h, and gives only statuses the man page documents."""
    with open(ERROR_H) as f:
        header = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    codes = set(re.findall(r"\b(CS_ERR_[A-Z_]+)\s*=", header))
    assert "CS_ERR_NOT_STOPPED" in codes, codes
    with open(os.path.join(REPO_DIR, "cli", "main.c")) as f:
        main_c = f.read()
    m = re.search(r"exit_statuses\[\]\s*=\s*\{(.*?)\n\};", main_c, re.S)
    assert m, "no exit_statuses table in cli/main.c"
    table = dict(re.findall(r"\{\s*(CS_ERR_[A-Z_]+),\s*(\d+)\s*\}",
                            m.group(1)))
    assert set(table) == codes, set(table) ^ codes
    documented = set(exit_statuses())
    assert {int(v) for v in table.values()} <= documented, table
    # A code of enum cs_status is its own status.
    for line in re.search(r"enum\s+cs_status\s*\{(.*?)\}", header,
                          re.S).group(1).split(","):
        mm = re.match(r"\s*(CS_ERR_[A-Z_]+)\s*=\s*(\d+)", line)
        if mm:
            assert table[mm.group(1)] == mm.group(2), mm.group(0)
    assert table["CS_ERR_NOT_STOPPED"] == "8"


def macro_args(rest):
    """The arguments of a roff macro line: blank-separated, a quoted one
    with its blanks kept ("" inside quotes is one quote)."""
    out, i = [], 0
    while i < len(rest):
        if rest[i] == " ":
            i += 1
        elif rest[i] == '"':
            j, buf = i + 1, ""
            while j < len(rest) and not (rest[j] == '"' and
                                         rest[j + 1:j + 2] != '"'):
                buf += rest[j]
                j += 2 if rest[j] == '"' else 1
            out.append(buf)
            i = j + 1
        else:
            j = rest.find(" ", i)
            j = len(rest) if j < 0 else j
            out.append(rest[i:j])
            i = j
    return out


def test_alternating_font_lines_join_no_words():
    """.BR, .RB and their kin set their arguments side by side with no
    blank between them: a line such as '.BR gevent.sleep , and threads'
    rendered "gevent.sleep,andthreads" (two such were mended in
    2ec41db).  Two neighbouring arguments that are both words are such a
    line."""
    word_end = re.compile(r"(^|[^A-Za-z0-9])[A-Za-z]{2,}$")
    word_start = re.compile(r"^[A-Za-z]{2,}($|[^A-Za-z0-9])")
    joined = []
    for n, line in enumerate(manpage_source().splitlines(), 1):
        m = re.match(r"^\.(BR|RB|BI|IB|IR|RI)\s+(.*)$", line)
        if not m:
            continue
        # (special characters, \(lq and the like, are no letters)
        args = [re.sub(r"\\(\(..|\[[^\]]*\])", "'", plain(a))
                for a in macro_args(m.group(2))]
        if any(word_end.search(left) and word_start.search(right)
               for left, right in zip(args, args[1:])):
            joined.append("%d: %s" % (n, line))
    assert not joined, "\n".join(joined)
    # ...and the check sees such a line
    args = [plain(a) for a in macro_args('gevent.sleep , and "threads of"')]
    assert word_end.search(args[2]) and word_start.search(args[3])
