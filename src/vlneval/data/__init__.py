"""Benchmark files: episodes, predictions and the embedded demo.

One module per format (``r2r``, ``rxr``, ``reverie``, ``soon``, ``cvdn``, ``hanna``,
``touchdown``, ``vlnce``), plus ``predictions`` (validation; its typed form in
``prediction_structs``) and ``ragged`` (CSR gathers). Files are read by :mod:`vlneval.io`:
decoded once by msgspec, explained only when msgspec rejects them. Submodules are imported on
use.
"""
