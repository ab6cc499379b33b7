"""Tests of the cvdn benchmark."""
