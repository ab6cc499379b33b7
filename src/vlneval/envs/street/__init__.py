"""The street family: Touchdown navigation on the StreetLearn graph (``StreetNavEnv``)."""
