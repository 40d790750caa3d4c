"""tableref: tableref."""
