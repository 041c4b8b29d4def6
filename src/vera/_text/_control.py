"""Text from data made safe to print: no control character reaches a terminal, a CI log or an
XML file.

An answer, a sample id or a metadata value can hold `ESC [31m` (a colour that stays on),
`ESC ] 0 ; title BEL` (an operating-system command: the window title, a hyperlink, on some
terminals the clipboard), a carriage return that overwrites the line before it, or a NUL that
makes an XML file not well-formed. `printable` shows each such character as a visible symbol,
one character for one, so a reader still sees that it was there and spans over the text
(rich's styles) keep their places.
"""

from __future__ import annotations

import re

_KEPT = "\t\n"
"""Controls that only lay text out: kept."""

_SHOWN: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in _KEPT}
"""C0 controls as Unicode's control pictures: ESC as ␛, NUL as ␀, BEL as ␇, CR as ␍."""
_SHOWN[0x7F] = "\u2421"  # ␡
# C1 controls (a lone 0x9b starts a CSI sequence on some terminals), surrogates (no encoder
# writes them) and the two non-characters XML 1.0 forbids have no picture of their own.
_SHOWN.update(dict.fromkeys([*range(0x80, 0xA0), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF], "\ufffd"))

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def printable(text: str) -> str:
    """`text` with every control character but tab and newline shown as a visible symbol
    (ESC as ␛, C1 controls, surrogates and U+FFFE/U+FFFF as �), one character for one.

    >>> printable("ok\\x1b[31m red\\x1b]0;pwned\\x07")
    'ok␛[31m red␛]0;pwned␇'
    """
    return text.translate(_SHOWN) if _UNSAFE.search(text) else text
