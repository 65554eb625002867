"""Processes: a multiprocessing pool with the fork start method works after
the parent ran cconv on several threads (the forking thread of the child
runs single-threaded: GNU OpenMP's pool does not survive fork), and so do
spawn and forkserver (README: Processes)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent("""
    import multiprocessing as mp, sys, threading
    import numpy as np
    import cconv
    from cconv import _kernels

    def work(i):
        x = np.full((2, 32, 48, 48), i + 1.0, np.float32)
        w = np.ones((32, 32, 3, 3), np.float32)
        return float(cconv.conv2d(x, w, padding=1).sum()), cconv.get_num_threads()

    def in_new_thread(i):
        # a thread the child starts has a fresh OpenMP pool: the count holds
        out = []
        t = threading.Thread(target=lambda: out.append(work(i)))
        t.start(); t.join()
        return out[0]

    if __name__ == "__main__":
        method = sys.argv[1]
        cconv.set_num_threads(2)
        x = np.ones((4, 64, 64, 64), np.float32)
        w = np.ones((64, 64, 3, 3), np.float32)
        cconv.conv2d(x, w, padding=1)  # multi-threaded: the parent's pool exists
        assert _kernels.pool_started(), "the parent ran no team of threads"
        want = [work(i)[0] for i in range(4)]
        with mp.get_context(method).Pool(2) as pool:
            got = pool.map(work, range(4), chunksize=1)
            threads = pool.map(in_new_thread, range(2), chunksize=1)
        assert [g[0] for g in got] == want, (got, want)
        counts = sorted({g[1] for g in got})
        if method == "fork":
            assert counts == [1], counts
            assert all(t[1] == 2 for t in threads), threads
        else:
            assert counts == [2], counts
        # the child sets its own count: the forking thread stays on one
        # thread (its pool cannot be rebuilt), the rest follows it
        print("ok", method, counts)
""")


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_pool_after_a_multithreaded_call(method, tmp_path):
    import multiprocessing as mp

    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    script = tmp_path / "pool.py"
    script.write_text(_SCRIPT)
    try:
        r = subprocess.run([sys.executable, str(script), method], cwd=tmp_path, capture_output=True,
                           text=True, timeout=240, env=dict(os.environ, CCONV_GRAIN_SCALE="1"))
    except subprocess.TimeoutExpired:
        pytest.fail(f"the {method} pool hung")
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


def test_set_num_threads_in_a_forked_child_does_not_hang(tmp_path):
    code = textwrap.dedent("""
        import os, numpy as np, cconv
        cconv.set_num_threads(2)
        x = np.ones((4, 64, 64, 64), np.float32); w = np.ones((64, 64, 3, 3), np.float32)
        y = cconv.conv2d(x, w, padding=1)
        pid = os.fork()
        if pid == 0:
            cconv.set_num_threads(2)
            ok = np.array_equal(cconv.conv2d(x, w, padding=1), y) and cconv.get_num_threads() == 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """)
    if not hasattr(os, "fork"):
        pytest.skip("no fork here")
    try:
        r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("the forked child hung")
    assert "child 0" in r.stdout, r.stdout + r.stderr
