"""Source lines of a main script run by a relative name.

Before 3.9 `python x.py` leaves the main module's co_filename "x.py";
coroscope shows its lines from the process's current directory, where
the interpreter's own traceback would read them, and none when that
directory holds no such file.  targets/relative_main.py parks at its
"# MARK: park" line.
"""

import os
import re
import shutil

from conftest import marker_line, run_coroscope, target_script

SCRIPT = target_script("relative_main.py")
NAME = os.path.basename(SCRIPT)


def park_text():
    with open(SCRIPT) as f:
        return f.read().splitlines()[marker_line(SCRIPT, "park") - 1].strip()


def start(keeper, interp, tmp_path, *args):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(SCRIPT, str(home / NAME))
    ready = str(tmp_path / "ready.json")
    t = keeper.start_with_ready([interp.path, NAME, ready] + list(args),
                                ready, interp=interp, workdir=str(home))
    return t


def frame_and_next(out):
    """The line after the main thread's frame at the park marker (None
    when the frame is the last line)."""
    lines = out.splitlines()
    frame = re.compile(r'File "(?:.*/)?%s", line %d, in park$' % (
        re.escape(NAME), marker_line(SCRIPT, "park")))
    hits = [i for i, l in enumerate(lines) if frame.search(l.strip())]
    assert len(hits) == 1, out
    i = hits[0]
    return lines[i + 1].strip() if i + 1 < len(lines) else None


def test_relative_main_script_shows_its_lines(keeper, interp, tmp_path):
    t = start(keeper, interp, tmp_path)
    res = run_coroscope("dump", str(t.pid))
    assert res.returncode == 0, res.stderr
    assert frame_and_next(res.stdout) == park_text(), res.stdout


def test_relative_name_in_another_directory(keeper, interp, tmp_path):
    """The process moved to a directory without the file: a name the
    interpreter would no longer find either, so no line, and no error."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    t = start(keeper, interp, tmp_path, str(other))
    res = run_coroscope("dump", str(t.pid))
    assert res.returncode == 0, res.stderr
    after = frame_and_next(res.stdout)
    major, minor = interp.version.split(".")[:2]
    relative = (int(major), int(minor)) < (3, 9)
    if relative:
        assert after != park_text(), res.stdout
    else:
        # 3.9 on make the main script's name absolute at start
        assert after == park_text(), res.stdout
