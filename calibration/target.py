"""The printed ChArUco target for camera calibration: its layout, its printable page, finding it.

ChArUco (a chessboard whose white squares hold ArUco markers) rather than a plain
chessboard: every corner carries an id, so a view where part of the sheet is out of frame,
under a thumb or in glare still gives usable corners. Views that reach the frame's corners
are exactly what a barrel-distorted webcam needs to be measured where it bends most.

The page is an A4 sheet, landscape, at a whole number of printer pixels per square so the
squares are exactly equal. Printed scale only sets the unit of the (unused) board-to-camera
distance; the intrinsics do not depend on it, so a printer that scales the page a little
does no harm, as long as the sheet lies flat.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from .errors import CalibrationError

SQUARES = (10, 7)  # squares across, down
SQUARE_MM = 25.0
MARKER_SHARE = 0.75  # marker side / square side
DICTIONARY = cv2.aruco.DICT_5X5_100
PAGE_MM = (297.0, 210.0)  # A4 landscape
DPI = 300
MM_PER_INCH = 25.4


@lru_cache(maxsize=1)
def charuco_board() -> cv2.aruco.CharucoBoard:
    """The target's layout (units: millimetres)."""
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    return cv2.aruco.CharucoBoard(SQUARES, SQUARE_MM, SQUARE_MM * MARKER_SHARE, dictionary)


def corner_count() -> int:
    """Inner chessboard corners: the points a view can contribute."""
    return (SQUARES[0] - 1) * (SQUARES[1] - 1)


def page_image(dpi: int = DPI) -> np.ndarray:
    """The printable A4 page (grey uint8): the target centred, with how to print it below."""
    px_mm = dpi / MM_PER_INCH
    page = np.full((round(PAGE_MM[1] * px_mm), round(PAGE_MM[0] * px_mm)), 255, np.uint8)
    square = round(SQUARE_MM * px_mm)
    width, height = SQUARES[0] * square, SQUARES[1] * square
    board = charuco_board().generateImage((width, height), marginSize=0, borderBits=1)
    x0, y0 = (page.shape[1] - width) // 2, (page.shape[0] - height) // 2
    page[y0:y0 + height, x0:x0 + width] = board
    text = (f"tableref camera calibration: print at 100 % (no 'fit to page'), squares "
            f"{square / px_mm:.1f} mm; tape flat on card")
    scale = dpi / 300.0
    cv2.putText(page, text, (x0, y0 + height + round(60 * scale)), cv2.FONT_HERSHEY_SIMPLEX, 1.1 * scale,
                0, max(1, round(2 * scale)), cv2.LINE_AA)
    return page


def write_page(path: str | Path, dpi: int = DPI) -> dict:
    """Write the page as PDF (by suffix, prints at size) or PNG (tagged with its dpi)."""
    path = Path(path)
    page = page_image(dpi)
    data = _pdf(page, PAGE_MM) if path.suffix.lower() == ".pdf" else _png(page, dpi)
    try:
        path.write_bytes(data)
    except OSError as e:
        raise CalibrationError("unwritable_file", f"cannot write {path}: {e.strerror or e}") from None
    square = round(SQUARE_MM * dpi / MM_PER_INCH) / dpi * MM_PER_INCH
    return {"file": str(path), "squares": list(SQUARES), "square_mm": round(square, 3),
            "corners": corner_count(), "page_mm": list(PAGE_MM), "dpi": dpi}


def _png(gray: np.ndarray, dpi: int) -> bytes:
    """PNG with a pHYs chunk, so viewers and printers know its physical size."""
    ok, encoded = cv2.imencode(".png", gray)
    if not ok:
        raise CalibrationError("unwritable_file", "could not encode the target page as PNG")
    data = encoded.tobytes()
    per_metre = round(dpi / MM_PER_INCH * 1000.0)
    body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, 1)
    chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body))
    end_of_header = 8 + 8 + 13 + 4  # signature, IHDR length + type, IHDR data, CRC
    return data[:end_of_header] + chunk + data[end_of_header:]


def _pdf(gray: np.ndarray, page_mm: tuple[float, float]) -> bytes:
    """A one-page PDF holding the grey image over the whole page (print dialogs keep PDF sizes)."""
    w_pt, h_pt = (v / MM_PER_INCH * 72.0 for v in page_mm)
    pixels = zlib.compress(gray.tobytes(), 9)
    h, w = gray.shape
    draw = f"q {w_pt:.2f} 0 0 {h_pt:.2f} 0 0 cm /Im0 Do Q".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w_pt:.2f} {h_pt:.2f}] "
        f"/Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>".encode(),
        f"<< /Type /XObject /Subtype /Image /Width {w} /Height {h} /ColorSpace /DeviceGray "
        f"/BitsPerComponent 8 /Filter /FlateDecode /Length {len(pixels)} >>\nstream\n".encode()
        + pixels + b"\nendstream",
        f"<< /Length {len(draw)} >>\nstream\n".encode() + draw + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


@dataclass(frozen=True)
class Detection:
    """The target's corners found in one image: pixel positions and their corner ids."""

    corners: np.ndarray  # N x 2 float32, image pixels
    ids: np.ndarray  # N int32
    image_size: tuple[int, int]  # (width, height)

    def __len__(self) -> int:
        return len(self.ids)

    def object_points(self) -> tuple[np.ndarray, np.ndarray]:
        """(N x 3 board millimetres, N x 2 pixels) for ``cv2.calibrateCamera``."""
        obj, img = charuco_board().matchImagePoints(self.corners.reshape(-1, 1, 2), self.ids.reshape(-1, 1))
        return obj.reshape(-1, 3).astype(np.float32), img.reshape(-1, 2).astype(np.float32)


def detect(image: np.ndarray) -> Detection:
    """Find the target's corners (sub-pixel); an empty Detection when it is not in view."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    size = (gray.shape[1], gray.shape[0])
    corners, ids, _, _ = cv2.aruco.CharucoDetector(charuco_board()).detectBoard(gray)
    if ids is None or len(ids) == 0:
        return Detection(np.zeros((0, 2), np.float32), np.zeros(0, np.int32), size)
    return Detection(corners.reshape(-1, 2).astype(np.float32), ids.ravel().astype(np.int32), size)
