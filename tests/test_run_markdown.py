"""run's step summary (GITHUB_STEP_SUMMARY) shows hostile names as they
are: no character split where a name is cut (its bytes would read as
invalid, \\xNN), entities, strike-through and math escaped in text,
backticks kept inside a code span by a longer fence, and no link made
of a name (rendered by cmark-gfm, the renderer GitHub's Markdown comes
from, with GitHub's autolink extension).

targets/md_names.py parks threads named with each trap (its NAMES).
"""

import re
import shutil
import subprocess

import pytest

from conftest import control_interpreter, target_script
from test_cli_hostile import run_coroscope_run


@pytest.fixture(scope="module")
def md(tmp_path_factory):
    """The step summary of a run of md_names.py, as UTF-8 (strict)."""
    tmp_path = tmp_path_factory.mktemp("md")
    py = control_interpreter()
    summary = tmp_path / "summary.md"
    summary.write_text("")
    code, err = run_coroscope_run(
        ["--timeout", "3", "--sample-last", "1", "--kill-after", "1", "--",
         py.path, target_script("md_names.py"), tmp_path / "ready"],
        env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert code == 124, err
    return summary.read_bytes().decode("utf-8")


def test_step_summary_names(md):
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


def test_step_summary_names_make_no_links(md):
    """A name that reads as an address ("http://...", "www....") is
    text in the rendered summary, not a link a reader might follow: in
    the stuck threads' lines and causes (text, escaped) and in the
    Processes list (a code span); rendered, it reads as it is."""
    cmark = shutil.which("cmark-gfm")
    if cmark is None:
        pytest.skip("cmark-gfm, the oracle, is not installed (make deps "
                    "installs Debian's cmark-gfm)")
    html = subprocess.run([cmark, "-e", "autolink"], input=md,
                          stdout=subprocess.PIPE, universal_newlines=True,
                          timeout=30, check=True).stdout
    name = "http://evil.example/a www.evil.example"
    assert "evil.example" in md, md
    assert "<a " not in html, html
    # (as text in the likely causes, in a code span in the list)
    assert html.count(name) >= 2, html
