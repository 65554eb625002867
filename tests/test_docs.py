"""The public API's docstrings: numpydoc sections that help() shows, and
their examples run as doctests against the installed package."""
import doctest
import inspect

import numpy as np
import pytest

import cconv
import cconv.grad

PUBLIC = [getattr(cconv, n) for n in cconv.__all__ if n not in ("grad", "__version__")]
PUBLIC += [getattr(cconv.grad, n) for n in cconv.grad.__all__]
FUNCS = [f for f in PUBLIC if inspect.isfunction(f) or inspect.isgeneratorfunction(f)
         or hasattr(f, "__wrapped__")]
NAMES = [getattr(f, "__qualname__", str(f)) for f in PUBLIC]


@pytest.mark.parametrize("obj", PUBLIC, ids=NAMES)
def test_doctests_pass(obj):
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(obj, getattr(obj, "__name__", None), globs={})
             if t.examples]
    assert tests, f"{obj} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    state = np.get_printoptions()
    try:
        for t in tests:
            runner.run(t)
    finally:
        np.set_printoptions(**state)
    res = runner.summarize(verbose=False)
    assert res.failed == 0 and res.attempted > 0


@pytest.mark.parametrize("obj", PUBLIC, ids=NAMES)
def test_help_shows_the_sections(obj):
    doc = inspect.getdoc(obj) or ""
    assert "Examples\n--------" in doc
    if inspect.isclass(obj):
        return
    params = [p for p in inspect.signature(obj).parameters.values()]
    if params:
        assert "Parameters\n----------" in doc
        for p in params:
            assert p.name in doc, f"{obj.__name__}: parameter {p.name} is not documented"
    takes_arrays = any(p.name in ("input", "weight", "grad_output", "n", "input_size")
                       for p in params)
    if takes_arrays:
        assert "Raises\n------" in doc


def test_a_failing_example_is_reported():
    """The runner above does fail on a wrong example."""
    def f():
        """
        >>> 1 + 1
        3
        """
    t = doctest.DocTestFinder().find(f, "f", globs={})[0]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(t, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1
