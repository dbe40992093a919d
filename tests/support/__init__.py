"""Shared test helpers: the scripted HTTP model server (a test double)."""
