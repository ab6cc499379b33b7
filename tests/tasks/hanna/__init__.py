"""Tests of the hanna benchmark."""
