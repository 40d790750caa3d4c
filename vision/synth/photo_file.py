"""What the phone stores: sideways sensor pixels with an EXIF orientation tag, JPEG encoding
and its round trip.
"""

from __future__ import annotations

import cv2
import numpy as np

from .conditions import Conditions



def exif_app1(orientation: int) -> bytes:
    """A minimal EXIF APP1 segment holding only the Orientation tag (0x0112).

    Layout: marker, length, "Exif\\0\\0", a big-endian TIFF header, one IFD with one SHORT
    entry, and a zero link to the next IFD.
    """
    tiff = (b"MM\x00\x2a" + (8).to_bytes(4, "big") + (1).to_bytes(2, "big")
            + (0x0112).to_bytes(2, "big") + (3).to_bytes(2, "big") + (1).to_bytes(4, "big")
            + orientation.to_bytes(2, "big") + b"\x00\x00" + (0).to_bytes(4, "big"))
    payload = b"Exif\x00\x00" + tiff
    return b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload


def _with_exif(jpeg: bytes, orientation: int) -> bytes:
    """Put an EXIF orientation right after SOI, replacing the JFIF APP0 (as phones write it)."""
    rest = jpeg[2:]
    if rest[:2] == b"\xff\xe0":
        rest = rest[2 + int.from_bytes(rest[2:4], "big"):]
    return jpeg[:2] + exif_app1(orientation) + rest


# Pixel rotation a sideways sensor stores so that the EXIF orientation turns it upright.
_STORE_ROTATION = {6: cv2.ROTATE_90_COUNTERCLOCKWISE, 8: cv2.ROTATE_90_CLOCKWISE}


def save_photo(upright: np.ndarray, c: Conditions) -> tuple[np.ndarray, bytes | None]:
    """What the phone stores: (pixel data before EXIF rotation, file bytes or None)."""
    stored = upright if c.exif_orientation == 1 else cv2.rotate(upright, _STORE_ROTATION[c.exif_orientation])
    if c.jpeg_quality is None and c.exif_orientation == 1:
        return stored, None
    quality = 95 if c.jpeg_quality is None else int(c.jpeg_quality)
    ok, buf = cv2.imencode(".jpg", stored, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    data = buf.tobytes()
    if c.exif_orientation != 1:
        data = _with_exif(data, c.exif_orientation)
    pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
    return pixels, data


def upright_size(size: tuple[int, int], c: Conditions) -> tuple[int, int]:
    """The upright photo's size: a sideways sensor of `size` gives a portrait picture."""
    return size if c.exif_orientation == 1 else (size[1], size[0])
