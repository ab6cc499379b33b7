"""Tests of the evaluation server (vlneval.server)."""
