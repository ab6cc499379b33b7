"""Benchmark files: episodes, predictions, the embedded demo, and fast readers for large files.

One module per format (``r2r``, ``rxr``, ``reverie``, ``soon``, ``cvdn``, ``hanna``,
``touchdown``, ``vlnce``), plus ``predictions`` (validation), ``scan`` and ``stream`` (the
compiled fast path) and ``jsonio`` (reading and atomic writing). Submodules are imported on use.
"""
