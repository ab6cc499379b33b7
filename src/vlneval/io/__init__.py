"""Reading JSON input files with bounded cost and clear errors; writing outputs atomically
(:func:`write_outputs`: stdout as ``-``, symlinks followed, FIFOs and devices written in place,
several outputs replaced together, no temporary file left behind).

Every benchmark and predictions file is read here, in one way:

1. :func:`read_bytes` takes the file's bytes (gunzipped when gzip, by magic number; a UTF-8
   byte-order mark dropped), refusing a file past :attr:`Limits.max_bytes` *before* holding it:
   a plain file by its size, a gzip stream while it is decompressed (a gzip bomb stops at the
   limit, in bounded memory), a pipe while it is read.
2. The format's reader decodes it once with msgspec, typed where the format has a Struct
   (``vlneval.tasks.r2r.format``, ``vlneval.tasks.common.predictions``), untyped elsewhere.
3. Only a file msgspec rejects goes through :func:`explain`: the explaining pass measures it
   (nesting, string and number literals, see :class:`Limits`), decodes it leniently (NaN and
   Infinity literals, so that the caller's checks can name the field that holds them) and lets
   the caller name every problem with file, episode id and field.

msgspec bounds the typed pass by itself: its types fix the nesting, numbers must fit 64 bits and
strings cost their bytes; the explaining pass uses Python's ``json``, which needs the limits.

Limits are defaults; each can be raised with an environment variable (``VLNEVAL_MAX_FILE_BYTES``,
``VLNEVAL_MAX_JSON_DEPTH``, ``VLNEVAL_MAX_STRING_BYTES``, ``VLNEVAL_MAX_NUMBER_CHARS``) or by
passing a :class:`Limits`.

Every name in ``__all__`` is importable from ``vlneval.io`` itself, and so are the byte markers
``BOM``, ``GZIP_MAGIC``, ``TEMP_MARK`` and ``PATH_CLIP``; the submodules' internal sizes (``limits.MIB``,
``reader.READ_STEP``, ``reader.GUNZIP_STEP``, ``records.CHUNK``) and the JSON-lines helper
``records.jsonl`` (reached through :func:`iter_records`) are imported from their own modules.
"""

from __future__ import annotations

from vlneval.io.explaining import explain, no_json
from vlneval.io.keys import unique_keys
from vlneval.io.limits import Limits
from vlneval.io.outputs import STDOUT, Output, check_outputs, resolve_output
from vlneval.io.paths import env_path, path_option, user_path
from vlneval.io.reader import BOM as BOM
from vlneval.io.reader import GZIP_MAGIC as GZIP_MAGIC
from vlneval.io.reader import (
    TruncatedGzipError,
    decode_json,
    gunzip,
    json_text,
    load_json,
    read_bytes,
)
from vlneval.io.records import (
    LineNumbers,
    LineRecord,
    array_chunks,
    gc_paused,
    iter_chunks,
    iter_records,
    typed_chunks,
)
from vlneval.io.temps import TEMP_MARK as TEMP_MARK
from vlneval.io.temps import clean_stale_temps
from vlneval.io.text import PATH_CLIP as PATH_CLIP
from vlneval.io.text import brief, clip, position, short_names
from vlneval.io.writer import atomic_write_bytes, atomic_write_text, to_json_bytes, write_outputs

__all__ = [
    "Limits",
    "read_bytes",
    "gunzip",
    "json_text",
    "TruncatedGzipError",
    "decode_json",
    "explain",
    "no_json",
    "load_json",
    "array_chunks",
    "typed_chunks",
    "gc_paused",
    "iter_chunks",
    "iter_records",
    "LineRecord",
    "LineNumbers",
    "unique_keys",
    "position",
    "clip",
    "brief",
    "short_names",
    "STDOUT",
    "Output",
    "resolve_output",
    "check_outputs",
    "write_outputs",
    "clean_stale_temps",
    "atomic_write_bytes",
    "atomic_write_text",
    "to_json_bytes",
    "env_path",
    "user_path",
    "path_option",
]
