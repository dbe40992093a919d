"""Tests for utp.adapters (definition and result adapters, prompt teaching)."""
