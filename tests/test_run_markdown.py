"""run's step summary (GITHUB_STEP_SUMMARY) shows hostile names as they
are: no character split where a name is cut (its bytes would read as
invalid, \\xNN), entities, strike-through and math escaped in text, and
backticks kept inside a code span by a longer fence.

targets/md_names.py parks threads named with each trap (its NAMES).
"""

import re

from conftest import control_interpreter, target_script
from test_cli_hostile import run_coroscope_run


def test_step_summary_names(tmp_path):
    py = control_interpreter()
    summary = tmp_path / "summary.md"
    summary.write_text("")
    code, err = run_coroscope_run(
        ["--timeout", "3", "--sample-last", "1", "--kill-after", "1", "--",
         py.path, target_script("md_names.py"), tmp_path / "ready"],
        env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 124, err
    md = summary.read_bytes().decode("utf-8")   # strict
    # no name here holds an invalid byte: an escape is a split character
    assert "\\x" not in md, md
    # the long name, cut on a character boundary in the Processes list
    assert re.search(r"^  - thread \d+ `x(\u20ac){19}\.\.\.`:", md, re.M), md
    # in text (the stuck threads' lines): escaped
    assert "\\&lt;script\\&gt; \\~\\~s\\~\\~ \\$x\\$" in md, md
    outside_spans = re.sub(r"(`+).*?\1", "", md)
    assert "&lt;" not in outside_spans.replace("\\&lt;", ""), md
    # (a code span shows entities as they are)
    assert "`&lt;script&gt; ~~s~~ $x$`" in md, md
    # in a code span: as it is, inside a fence of three
    assert "```tick`two``three```" in md, md
