"""The package's module-level imports form no cycle, and nothing the
package imports when it loads reaches CuPy or torch."""
from __future__ import annotations

import ast
import os
import subprocess
import sys

import cconv


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(cconv.__file__))


def _module_imports(path: str, name: str) -> set:
    """cconv modules ``name`` imports at module level (not inside functions)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    pkg = name.rsplit(".", 1)[0] if not path.endswith("__init__.py") else name
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("cconv")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("cconv"):
                continue
            if node.module:  # "from .x import y": module x (y may be a module too)
                out.add(mod)
            for a in node.names:  # "from . import _x" names a module
                out.add(f"{mod}.{a.name}")
    return out


def _graph() -> dict:
    root = _package_dir()
    mods = {}
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
            name = rel[:-len(".__init__")] if rel.endswith(".__init__") else rel
            mods[name] = path
    return {m: {t for t in _module_imports(p, m) if t in mods and t != m} for m, p in mods.items()}


def test_no_import_cycle():
    g = _graph()
    assert "cconv._dispatch" in g and "cconv._run" in g
    state: dict = {}
    stack: list = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for t in sorted(g[m]):
            if state.get(t) == 1:
                cyc = stack[stack.index(t):] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cyc))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m)


def test_import_loads_no_gpu_or_torch_module():
    code = ("import sys, cconv; cconv.conv2d(__import__('numpy').ones((1, 1, 3, 3)), "
            "__import__('numpy').ones((1, 1, 2, 2))); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cupy', 'torch', 'cconv.cuda')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.stdout.strip() == "[]", out.stdout
