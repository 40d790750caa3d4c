"""tableref: rules."""
