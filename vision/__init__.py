"""tableref: vision."""
