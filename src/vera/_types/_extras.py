"""How to install an optional extra, said the same way by every message that needs one.

`pip install 'vera-eval[view]'` works where VERA came from the package index. From a clone of
the repository it asks the index for a published vera-eval instead of installing the clone
(and fails where none is published), so each message also gives the editable install from the
clone's folder: `pip install -e '.[view]'`. It lives in the types layer so that every module,
however low, can build its message from it.
"""

from __future__ import annotations

DISTRIBUTION = "vera-eval"


def install_hint(extra: str) -> str:
    """The commands that install `extra`: from the package index, and from a clone.

    >>> install_hint("view")
    "pip install 'vera-eval[view]' (from a clone of the repository: pip install -e '.[view]')"
    """
    return (
        f"pip install '{DISTRIBUTION}[{extra}]' "
        f"(from a clone of the repository: pip install -e '.[{extra}]')"
    )
