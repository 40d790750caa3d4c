"""tableref: bench."""
