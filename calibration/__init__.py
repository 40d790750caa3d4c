"""tableref: calibration, so readings hold on a user's own camera, table and light.

- ``camera``: intrinsics and lens distortion from the printed ChArUco target (``target``);
- ``board``: the board's pose locked for a fixed camera, and the check that it has not moved;
- ``colours``: the table's colour profile, re-normalised as the light drifts;
- ``store``: the versioned calibration file that holds any of the three;
- ``cli``: ``tableref calibrate camera|board|colours``.
"""
from .errors import CalibrationError
from .store import CALIBRATED_GAME, Calibration, default_path, load_calibration, save_calibration

__all__ = ["CALIBRATED_GAME", "Calibration", "CalibrationError", "default_path", "load_calibration",
           "save_calibration"]
