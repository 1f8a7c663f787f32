"""A small terminal for the live-view tests: replays what curses wrote to
an xterm-like pseudo-terminal onto a grid of cells, so that a test can
read the screen as a user sees it, row by row, and measure each row's
width in columns (a wide character takes two cells).

It knows the sequences ncurses sends for TERM=xterm: cursor moves, erases,
repeats, inserted and deleted lines and characters, the scrolling region,
and ignores modes, attributes and character sets.  Anything else raises
ValueError: a test must not read a screen it could not replay.
"""

import re
import unicodedata

CSI = re.compile(r"\x1b\[([?>=]?)([0-9;]*)([@A-Za-z`])")
IGNORED_ESC = re.compile(r"\x1b(?:[()*+][0-9A-Za-z]|[=>])")


def cell_width(ch):
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


class Screen(object):
    def __init__(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.grid = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0
        self.top, self.bottom = 0, rows - 1
        self.last = " "
        self.saved = (0, 0)
        # xterm's pending wrap: a character written in the last column
        # leaves the cursor there; only the next character wraps
        self.pending = False

    # ---- reading ----

    def row(self, y):
        """Row y as text (a wide character once, trailing blanks kept)."""
        return "".join(c for c in self.grid[y] if c is not None)

    def row_width(self, y):
        """Columns up to the last non-blank cell of row y."""
        cells = self.grid[y]
        for x in range(self.cols - 1, -1, -1):
            if cells[x] != " ":   # (None: a wide character's right half)
                return x + 1
        return 0

    # ---- writing ----

    def _blank_line(self):
        return [" "] * self.cols

    def _scroll_up(self, n=1):
        for _ in range(n):
            del self.grid[self.top]
            self.grid.insert(self.bottom, self._blank_line())

    def _scroll_down(self, n=1):
        for _ in range(n):
            del self.grid[self.bottom]
            self.grid.insert(self.top, self._blank_line())

    def _newline(self):
        if self.y == self.bottom:
            self._scroll_up()
        elif self.y < self.rows - 1:
            self.y += 1

    def _put(self, ch):
        w = cell_width(ch)
        if w == 0:   # combining: onto the cell before
            if self.x > 0 and self.grid[self.y][self.x - 1] is not None:
                self.grid[self.y][self.x - 1] += ch
            return
        if self.pending or self.x + w > self.cols:
            self.x = 0
            self._newline()
        self.pending = False
        self.grid[self.y][self.x] = ch
        if w == 2:
            self.grid[self.y][self.x + 1] = None   # its right half
        if self.x + w >= self.cols:
            self.x = self.cols - 1
            self.pending = True
        else:
            self.x += w
        self.last = ch

    def _erase(self, y, x0, x1):
        for x in range(max(x0, 0), min(x1, self.cols)):
            self.grid[y][x] = " "

    def _csi(self, private, params, final):
        nums = [int(p) if p else 0 for p in params.split(";")] \
            if params else []

        def arg(i, default=1):
            return nums[i] if len(nums) > i and nums[i] else default

        if private or final in "mhlt":
            return   # modes, attributes, window operations
        if final in "Hf":
            self.y = min(arg(0), self.rows) - 1
            self.x = min(arg(1), self.cols) - 1
        elif final == "d":
            self.y = min(arg(0), self.rows) - 1
        elif final in "G`":
            self.x = min(arg(0), self.cols) - 1
        elif final == "A":
            self.y = max(self.y - arg(0), 0)
        elif final == "B":
            self.y = min(self.y + arg(0), self.rows - 1)
        elif final == "C":
            self.x = min(self.x + arg(0), self.cols - 1)
        elif final == "D":
            self.x = max(self.x - arg(0), 0)
        elif final == "X":
            self._erase(self.y, self.x, self.x + arg(0))
        elif final == "K":
            mode = arg(0, 0)
            if mode == 0:
                self._erase(self.y, self.x, self.cols)
            elif mode == 1:
                self._erase(self.y, 0, self.x + 1)
            else:
                self._erase(self.y, 0, self.cols)
        elif final == "J":
            mode = arg(0, 0)
            ys = (range(self.y + 1, self.rows) if mode == 0 else
                  range(0, self.y) if mode == 1 else range(self.rows))
            for y in ys:
                self._erase(y, 0, self.cols)
            if mode == 0:
                self._erase(self.y, self.x, self.cols)
        elif final == "b":
            for _ in range(arg(0)):
                self._put(self.last)
        elif final == "@":
            row = self.grid[self.y]
            n = arg(0)
            self.grid[self.y] = (row[:self.x] + [" "] * n +
                                 row[self.x:])[:self.cols]
        elif final == "P":
            row = self.grid[self.y]
            n = arg(0)
            self.grid[self.y] = row[:self.x] + row[self.x + n:] + \
                [" "] * n
        elif final in "LM":
            if not self.top <= self.y <= self.bottom:
                return
            for _ in range(arg(0)):
                if final == "L":
                    del self.grid[self.bottom]
                    self.grid.insert(self.y, self._blank_line())
                else:
                    del self.grid[self.y]
                    self.grid.insert(self.bottom, self._blank_line())
        elif final == "S":
            self._scroll_up(arg(0))
        elif final == "T":
            self._scroll_down(arg(0))
        elif final == "r":
            self.top = arg(0) - 1
            self.bottom = min(arg(1, self.rows), self.rows) - 1
            self.x = self.y = 0
        else:
            raise ValueError("unknown sequence CSI %s%s%s"
                             % (private, params, final))

    def feed(self, text):
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch < " " or ch == "\x7f":
                self.pending = False   # a move or control: no wrap
            if ch == "\x1b":
                m = CSI.match(text, i)
                if m:
                    self._csi(m.group(1), m.group(2), m.group(3))
                    i = m.end()
                    continue
                m = IGNORED_ESC.match(text, i)
                if m:
                    i = m.end()
                    continue
                nxt = text[i + 1:i + 2]
                if nxt == "7":
                    self.saved = (self.y, self.x)
                elif nxt == "8":
                    self.y, self.x = self.saved
                elif nxt == "D":
                    self._newline()
                elif nxt == "E":
                    self.x = 0
                    self._newline()
                elif nxt == "M":
                    if self.y == self.top:
                        self._scroll_down()
                    elif self.y > 0:
                        self.y -= 1
                else:
                    raise ValueError("unknown sequence %r" % text[i:i + 8])
                i += 2
                continue
            if ch == "\r":
                self.x = 0
            elif ch == "\n":
                self._newline()
            elif ch == "\b":
                self.x = max(self.x - 1, 0)
            elif ch == "\t":
                self.x = min((self.x // 8 + 1) * 8, self.cols - 1)
            elif ch in "\x07\x0e\x0f" or ord(ch) < 0x20:
                pass
            else:
                self._put(ch)
            i += 1
