"""What a greenlet target knows of a greenlet's frames (shared by
gevent_target.py and greenlet_target.py, which import it from their own
directory)."""


def frames_of(g):
    """gr_frame's chain as the process sees it, innermost first."""
    out = []
    f = g.gr_frame
    while f is not None and len(out) < 200:
        out.append({"file": f.f_code.co_filename, "line": f.f_lineno,
                    "function": f.f_code.co_name})
        f = f.f_back
    return out
