"""tableref: companion_app."""
