"""Synthetic phone photos of game boards with exact ground truth, for tests and benchmarks.

`conditions` names the ways a photo can be taken, `scene` photographs any top-down board
texture, and `blokus` draws the Blokus board and states the truth for each photo.
"""

from .blokus import SyntheticPhoto, render_board_topdown, render_frame, render_photo
from .conditions import CONDITIONS, Conditions, sample_conditions
from .scene import CameraSetup

__all__ = ["CONDITIONS", "CameraSetup", "Conditions", "SyntheticPhoto", "render_board_topdown",
           "render_frame", "render_photo", "sample_conditions"]
