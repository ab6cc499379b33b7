"""Tests of the touchdown benchmark."""
