"""Stores: where keys and their bytes live (local directory, memory, zip)."""
