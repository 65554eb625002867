"""The benchmark layers (cconv/_zoo.py, where ``cconv tune`` finds them too)."""

from cconv._zoo import CASES, EXTRA, FAMILIES, SMALL  # noqa: F401
