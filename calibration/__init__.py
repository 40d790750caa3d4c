"""tableref: calibration."""
