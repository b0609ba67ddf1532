__version__ = "0.1.0"
"""iclr26nb: nineteen ICLR 2026 papers as literate notebooks. `iclr26nb.<slug>` (e.g. `iclr26nb.abba`) imports a
series' module on first use, so `import iclr26nb` stays cheap. (This file is the package root, kept by hand: nbdev
only updates its `__version__` line; every other module is exported from nbs/.)"""
import importlib as _importlib

_SUBPACKAGES = ("core", "models", "cli")


def __getattr__(name: str):
    "Import `iclr26nb.<name>` lazily: a series module (by its slug), `core`, `models` or `cli`."
    from iclr26nb.core.registry import PAPERS
    slugs = {p.slug for p in PAPERS}
    if name in slugs or name in _SUBPACKAGES:
        try: return _importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}": raise
            raise AttributeError(f"iclr26nb.{name}: series {name!r} is not built yet") from None
    raise AttributeError(f"module 'iclr26nb' has no attribute {name!r}; series: {', '.join(sorted(slugs))}")


def __dir__():
    from iclr26nb.core.registry import PAPERS
    return sorted(set(globals()) | {p.slug for p in PAPERS} | set(_SUBPACKAGES))
