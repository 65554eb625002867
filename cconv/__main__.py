"""``python -m cconv``: the same as the ``cconv`` command (see cconv/cli.py)."""

if __name__ == "__main__":
    from cconv.cli import main

    raise SystemExit(main())
