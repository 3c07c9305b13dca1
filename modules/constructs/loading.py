"""The CDK library, imported in the background while the blueprints are read.

Importing cdktf (or cdktn) starts Node.js and loads the library into it: about 0.3 s spent mostly
waiting on Node, during which the main thread can read, design and lint the blueprints. Synthesis
waits for that import to end before importing the library itself: a module whose import fails in
one thread reaches another thread importing it at the same moment half-initialized, so the waiting
is explicit, and a failure is raised again, and reported, by synthesis's own import.
"""

from __future__ import annotations

import contextlib
import threading

_loading: threading.Thread | None = None


def _load() -> None:
    with contextlib.suppress(BaseException):
        import modules.constructs.cdk  # noqa: F401


def start() -> None:
    """Begin importing the CDK library (once per process)."""
    global _loading
    if _loading is None:
        _loading = threading.Thread(target=_load, name="load-cdk")
        _loading.start()


def wait() -> None:
    """Return once a background import begun by `start` has ended, whether or not it succeeded."""
    if _loading is not None:
        _loading.join()
