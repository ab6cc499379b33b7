"""What one input file may cost (:class:`Limits`); environment variables raise each bound."""

from __future__ import annotations

import os
from dataclasses import dataclass

from vlneval.errors import VLNEvalError

MIB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """What one input file may cost.

    Attributes:
        max_bytes: most bytes of JSON text (after gunzip), 512 MiB by default
            (``VLNEVAL_MAX_FILE_BYTES``); the largest public split files are far smaller.
        max_depth: deepest nesting of lists and objects the explaining pass decodes, 64
            (``VLNEVAL_MAX_JSON_DEPTH``); benchmark files need at most 6.
        max_string: longest string literal the explaining pass decodes, 1 MiB
            (``VLNEVAL_MAX_STRING_BYTES``).
        max_number: longest number literal the explaining pass decodes, 400 characters
            (``VLNEVAL_MAX_NUMBER_CHARS``): every finite double fits; a longer integer (up
            to a MiB) stands in by its number of digits, for the checks to name its field.

    Example:
        >>> Limits().max_depth, Limits(max_bytes=10).max_bytes
        (64, 10)
    """

    max_bytes: int = 512 * MIB
    max_depth: int = 64
    max_string: int = MIB
    max_number: int = 400

    @classmethod
    def from_env(cls) -> Limits:
        """The defaults, each raised (or lowered) by its environment variable when set.

        Raises:
            VLNEvalError: a variable that is not a positive integer.
        """
        names = {
            "max_bytes": "VLNEVAL_MAX_FILE_BYTES",
            "max_depth": "VLNEVAL_MAX_JSON_DEPTH",
            "max_string": "VLNEVAL_MAX_STRING_BYTES",
            "max_number": "VLNEVAL_MAX_NUMBER_CHARS",
        }
        values: dict[str, int] = {}
        for attr, var in names.items():
            text = os.environ.get(var)
            if text:
                if not text.strip().isdigit() or int(text) < 1:
                    raise VLNEvalError(f"{var}={text!r}: expected a positive whole number")
                values[attr] = int(text)
        return cls(**values)
