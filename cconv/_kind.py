"""Defaults per CPU kind: measured winners shipped with cconv.

The ordered list of methods in ``_dispatch`` and the C predicates are one
set of rules for every CPU.  Where a kind of CPU (a vendor and the
instruction set cconv's kernels use on it: ``amd-avx512``, ``intel-avx2``,
``arm-neon``, ...) has been measured, ``cconv/kinds/<kind>.json`` lists the
problems of the built-in layer sets on which another method beat the
rules' choice by a margin, per thread count, with the times of every
method.  Where one generation of a vendor's cores differs from the rest
(AMD's Zen 4 runs AVX-512 instructions on 256-bit units, Zen 5 on 512-bit
ones), it is a kind of its own, named with the core: ``amd-zen4-avx512``.
A CPU's kinds are tried most specific first: a Zen 4 takes
``amd-zen4-avx512.json`` where cconv ships it, else ``amd-avx512.json``.
cconv loads the table of the CPU it runs on at import; the
dispatcher consults it after benchmark mode's winners and the user's
tuning file, before its rules.  ``CCONV_KIND_DEFAULTS=0`` turns it off;
``CCONV_KIND_DEFAULTS=<path>`` loads that table instead (one measured for
one of this CPU's kinds and not yet shipped).

The file format is the tuning file's (``_tuning``), with ``kind`` in place
of ``machine``::

    {"format": "cconv-kind-defaults", "version": 1, "kind": "amd-avx512",
     "measured_on": {"cpu": "...", "isa": "avx512", "date": "2026-12-03"},
     "margin": 1.1, "entries": [{"problem": {...}, "threads": 2,
     "method": "winograd_3x3", "default": "implicit_gemm", "ms": {...}}]}

``benches/method_table.py --kind-table`` measures a kind and writes its
table.
"""
from __future__ import annotations

import json
import os
import platform
import warnings
from typing import Any

from . import _dispatch

__all__ = ["vendor", "core", "cpu_kind", "cpu_kinds", "table_path", "read_table", "read_table_doc",
           "load_at_import", "loaded_kind", "document"]

FORMAT = "cconv-kind-defaults"
VERSION = 1
_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kinds")

# /proc/cpuinfo's vendor_id (x86) or CPU implementer (ARM) -> vendor name
_VENDORS = {"AuthenticAMD": "amd", "GenuineIntel": "intel", "HygonGenuine": "hygon",
            "0x41": "arm", "0xc0": "ampere", "0x61": "apple", "0x48": "hisilicon"}


def vendor() -> str:
    """The CPU's vendor, lower case ('amd', 'intel', 'arm', ...; 'other'
    where /proc/cpuinfo does not say)."""
    from ._tuning import cpuinfo_value

    return _VENDORS.get(cpuinfo_value(("vendor_id", "CPU implementer")) or "", "other")


def _isa() -> str:
    isa = _dispatch.simd_level()
    return "scalar" if " " in isa else isa  # "scalar" also for a build without SIMD kernels


# AMD's x86 families by core: 0x17 Zen 1 and 2 (named "zen2"), 0x19 Zen 3
# (no AVX-512) and Zen 4 (AVX-512 on 256-bit units), 0x1A Zen 5 (512-bit
# units)
_AMD_CORES = {23: "zen2", 25: "zen3", 26: "zen5"}


def core_of(vendor_name: str, family: str | None, isa: str) -> str | None:
    """The core generation of a CPU by vendor, /proc/cpuinfo's 'cpu
    family' and the instruction set ('zen4'; None where cconv does not
    tell this vendor's cores apart)."""
    if vendor_name != "amd" or family is None:
        return None
    try:
        fam = int(family)
    except ValueError:
        return None
    if fam == 25 and isa.startswith("avx512"):
        return "zen4"
    return _AMD_CORES.get(fam)


def core() -> str | None:
    """This CPU's core generation where cconv tells them apart ('zen4',
    'zen5', ...), else None."""
    from ._tuning import cpuinfo_field

    return core_of(vendor(), cpuinfo_field("cpu family"), _isa())


def cpu_kinds() -> list:
    """This machine's kinds, most specific first: ``<vendor>-<core>-<isa>``
    where the core is known, then ``<vendor>-<isa>`` (the instruction set
    cconv's kernels use here), e.g. ['amd-zen4-avx512', 'amd-avx512']."""
    v, isa, c = vendor(), _isa(), core()
    return ([f"{v}-{c}-{isa}"] if c else []) + [f"{v}-{isa}"]


def cpu_kind() -> str:
    """This machine's most specific kind (``cpu_kinds()[0]``): the name a
    table measured here is written under."""
    return cpu_kinds()[0]


_loaded: list = []  # [kind, path] of the table load_at_import took, if any


def loaded_kind() -> tuple | None:
    """(kind, path) of the table loaded at import, None if there was none."""
    return tuple(_loaded) if _loaded else None


def table_path(kind: str) -> str:
    """Where the shipped table of ``kind`` lives (it may not exist)."""
    return os.path.join(_DIR, f"{kind}.json")


def _warn(path: str, why: str) -> None:
    warnings.warn(f"cconv: ignoring the CPU-kind defaults {path}: {why}", RuntimeWarning, stacklevel=3)


def read_table(path: str, kind: str | None) -> dict:
    """The winners of the table at ``path`` ((Problem, threads) -> Backend)
    for ``kind``; {} for a missing file, and {} with a warning for one that
    is not a table of ``kind`` (entries that do not parse, or name methods
    this cconv does not have, are left out with a warning)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as e:
        _warn(path, f"it cannot be read as JSON ({type(e).__name__}: {e})")
        return {}
    return read_table_doc(doc, kind, path)


def read_table_doc(doc: Any, kind: str | None = None, where: str = "the table") -> dict:
    """``read_table`` of a parsed document (``kind`` None: any of this
    CPU's kinds)."""
    from ._tuning import parse_entries

    kinds = [kind] if kind else cpu_kinds()
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        _warn(where, f"it is not a {FORMAT} file of version {VERSION}")
        return {}
    if doc.get("kind") not in kinds:
        _warn(where, f"it is the table of {doc.get('kind')!r}, this CPU is {' / '.join(map(repr, kinds))}")
        return {}
    entries = doc.get("entries")
    if not isinstance(entries, list):
        _warn(where, "it has no list of entries")
        return {}
    table, bad, stale = parse_entries(entries)
    if bad or stale:
        warnings.warn(f"cconv: the CPU-kind defaults {where}: {bad + stale} of {len(entries)} entries "
                      f"left out (malformed or unknown methods)", RuntimeWarning, stacklevel=2)
    return table


def load_at_import() -> None:
    """Load this CPU kind's table (nothing when there is none, or when
    ``CCONV_KIND_DEFAULTS`` is '0'; the file it names when it is a path)."""
    env = os.environ.get("CCONV_KIND_DEFAULTS", "").strip()
    if env == "0":
        return
    if env and env != "1":
        if not os.path.exists(env):
            _warn(env, "it does not exist")
            return
        path, kind = env, None
    else:  # the most specific of this CPU's kinds that cconv ships a table of
        kind = next((k for k in cpu_kinds() if os.path.exists(table_path(k))), None)
        if kind is None:
            return
        path = table_path(kind)
    table = read_table(path, kind)
    if table:
        _dispatch.set_kind_defaults(table)
        _loaded[:] = [kind or _doc_kind(path), path]


def _doc_kind(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return str(json.load(f).get("kind"))


def document(kind: str, entries: list, margin: float, date: str) -> dict:
    """The JSON document of a table."""
    from ._tuning import _cpu_model
    from ._tuning import cpu_core

    return {"format": FORMAT, "version": VERSION, "kind": kind,
            "measured_on": {"cpu": _cpu_model(), "core": cpu_core(), "isa": _dispatch.simd_level(),
                            "arch": platform.machine(), "date": date},
            "margin": margin, "entries": entries}
