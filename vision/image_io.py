"""Load a user's photo as an upright BGR array, or refuse it with a clear :class:`ReadError`.

Phone photos arrive as files or uploaded bytes in any orientation. OpenCV 4.12's
``imdecode`` turns JPEG and PNG pixels upright by their EXIF orientation tag
(``tests/test_image_io.py`` pins this, so an OpenCV upgrade that stops doing it fails loudly).
What it does not do is refuse dangerous or useless input politely, so this module checks
the format signature and, for JPEG and PNG, the pixel count in the header *before*
decoding: a 50+ MP image (or a decompression bomb) is refused without allocating it.

A reader that needs fewer pixels than a phone's 12 MP may have a JPEG decoded at 1/2, 1/4 or
1/8 of its size (:func:`load_photo`): libjpeg then runs a smaller inverse DCT per block instead
of decoding every pixel and shrinking them afterwards, which is most of a 12 MP photo's decode.
"""
from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

from .errors import ReadError

MAX_PIXELS = 50_000_000
MAX_FILE_BYTES = 200 * 1024 * 1024
MIN_SIDE = 240
GREY_SPREAD = 4  # grey levels (of 255) between a pixel's channels that a colourless photo stays within
COLOUR_SHARE = 0.01  # ... in all but this share of its pixels
COLOUR_SAMPLES = 400  # pixels per side of the grid of pixels the colour is measured on

_SIGNATURES = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
_HEIF_BRANDS = (b"heic", b"heix", b"hevc", b"heim", b"heis", b"mif1", b"msf1", b"avif")
# libjpeg's scale divisors and the flags asking imdecode for them (colour, EXIF orientation applied)
_DECODE_FLAGS = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
                 8: cv2.IMREAD_REDUCED_COLOR_8}
# JPEG start-of-frame markers carry the image size (C4, C8 and CC are not frames).
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def load_image(source: str | Path | bytes) -> np.ndarray:
    """Decode a photo (path or file bytes) to an upright BGR ``uint8`` array, every pixel of it.

    Raises :class:`ReadError` with code ``unreadable_image`` (missing, empty, truncated or
    corrupt file), ``not_an_image``, ``image_too_large`` or ``image_too_small``.
    """
    return load_photo(source)[0]


def load_photo(source: str | Path | bytes, short_side: int | None = None) -> tuple[np.ndarray, int]:
    """Decode a photo as :func:`load_image` does, and the factor its sides were divided by.

    ``short_side``: the fewest pixels on the short side the reading needs. A JPEG with at least
    twice as many, and sides the divisor divides, is decoded at the smallest of 1/2, 1/4 and 1/8
    scale that keeps them (:func:`_reduction`; EXIF orientation still applied); any other file,
    or a JPEG with fewer, is decoded whole (factor 1). A reduced pixel ``x`` covers the file's
    pixels round ``factor * x + (factor - 1) / 2`` (and so for ``y``):
    :meth:`vision.pose.BoardPose.scaled` by the factor maps a pose back to the file.
    """
    data = _read_bytes(source)
    kind = _format(data)
    size = _header_size(data, kind)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ReadError("image_too_large", f"the image is {size[0]}x{size[1]} pixels; "
                        f"at most {MAX_PIXELS // 1_000_000} MP are accepted")
    factor = _reduction(size, kind, short_side)
    image = cv2.imdecode(np.frombuffer(data, np.uint8), _DECODE_FLAGS[factor])
    if image is None or image.ndim != 3 or image.shape[2] != 3:
        raise ReadError("unreadable_image", f"the {kind} data is corrupt and could not be decoded")
    h, w = image.shape[:2]
    if h * w > MAX_PIXELS:
        raise ReadError("image_too_large", f"the image is {w}x{h} pixels; at most "
                        f"{MAX_PIXELS // 1_000_000} MP are accepted")
    if min(h, w) < MIN_SIDE:
        raise ReadError("image_too_small", f"the image is {w}x{h} pixels; a board needs at least "
                        f"{MIN_SIDE} pixels on the short side")
    return image, factor


def _reduction(size: tuple[int, int] | None, kind: str, short_side: int | None) -> int:
    """The largest of libjpeg's scale divisors that leaves a JPEG of ``size`` (width, height)
    ``short_side`` pixels on its short side, and never fewer than :data:`MIN_SIDE` (a photo
    accepted whole is not refused as too small once reduced); 1 for other formats (their
    decoders cannot skip work by scale: OpenCV would decode every pixel and then shrink them).
    Only a divisor of both sides: libjpeg rounds a side up, so of a 4001-pixel side the last of
    2001 pixels covers one file pixel, a pose scaled back would span 4002 and, once EXIF
    orientation mirrors that side, sit a pixel off."""
    if kind != "JPEG" or short_side is None or size is None:
        return 1
    return max((d for d in _DECODE_FLAGS if min(size) >= d * max(short_side, MIN_SIDE)
                and size[0] % d == 0 and size[1] % d == 0), default=1)


def as_bgr(image: np.ndarray) -> np.ndarray:
    """An in-memory picture as 3-channel BGR uint8, or a ReadError saying why not.

    Readers take arrays from the CLI, the live camera and tests alike; a grey or BGRA frame
    is converted, anything else (wrong type, empty, tiny) is refused with a clear code.
    """
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise ReadError("not_an_image", "expected an 8-bit image array (height x width x 3, BGR)")
    if image.ndim == 3 and image.shape[2] not in (1, 3, 4):
        raise ReadError("not_an_image", f"an image has 1, 3 or 4 channels, not {image.shape[2]}")
    h, w = image.shape[:2]
    if min(h, w) < MIN_SIDE:
        raise ReadError("image_too_small", f"the image is {w}x{h} pixels; a board needs at least "
                        f"{MIN_SIDE} pixels on the short side")
    if image.ndim == 2 or image.shape[2] == 1:
        return cv2.cvtColor(image.reshape(h, w), cv2.COLOR_GRAY2BGR)
    if image.shape[2] == 4:
        return cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    return image


def require_colour(image: np.ndarray) -> np.ndarray:
    """``image`` itself, or a ReadError (``no_colour``) for a black-and-white photo.

    A grey JPEG, a 16-bit grey PNG or a phone's mono filter give three equal channels: every
    piece then has the grey of some other colour (a Blokus board read as empty, Equilibrix's
    white tiles lost in the board's light fields), so a reading would be a confident guess.
    Any colour photo, even of a grey board on a grey table, has a tinted part (the pieces, the
    light's cast, the sensor's colour noise) spreading its channels far more than JPEG
    rounding of a grey picture does. Measured on single pixels of a coarse grid, not on an
    average, so that a dim photo's colour noise is kept and the test stays cheap at 12 MP.
    A tinted one-colour picture (a sepia, warm-mono or duotone filter) passes; the Blokus and
    Gemblo readers doubt its cells by their light instead (:mod:`vision.one_hue`). It is not
    refused here because no colour measure tells it from a real photo of an empty board:
    measured (session 17) as the share of 8 px patches whose chroma departs > 16 levels from
    the mean chroma of patches of the same brightness, empty Blokus and Gemblo boards (warm light, wood, dim) score 0.0000, as
    pure sepia does; Equilibrix and Geometrius photos with pieces go down to 0.001-0.005,
    below what JPEG rounding gives a filtered photo (up to 0.1).
    """
    h, w = image.shape[:2]
    grid = np.ascontiguousarray(image[::max(1, h // COLOUR_SAMPLES), ::max(1, w // COLOUR_SAMPLES)])
    b, g, r = cv2.split(grid)  # per-channel extremes in OpenCV: a fifth of numpy's time on a strided grid
    spread = cv2.subtract(cv2.max(cv2.max(b, g), r), cv2.min(cv2.min(b, g), r))
    if np.count_nonzero(spread > GREY_SPREAD) < COLOUR_SHARE * spread.size:
        raise ReadError("no_colour", "the photo is black and white: the pieces' colours cannot be told apart; "
                        "take it in colour (no black-and-white filter)")
    return image


def _read_bytes(source: str | Path | bytes) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, Path)):
        path = Path(source)
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ReadError("image_too_large", f"{path.name} is larger than "
                                f"{MAX_FILE_BYTES // (1024 * 1024)} MB")
            data = path.read_bytes()
        except OSError as exc:
            raise ReadError("unreadable_image", f"cannot open {path}: {exc.strerror or exc}") from None
    else:
        raise TypeError(f"load_image takes a path or bytes, not {type(source).__name__}")
    if not data:
        raise ReadError("unreadable_image", "the file is empty")
    return data


def _format(data: bytes) -> str:
    """Name the format from its signature; unknown data is refused before decoding."""
    for magic, name in _SIGNATURES:
        if data.startswith(magic):
            return name
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WebP"
    if data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS:
        raise ReadError("not_an_image", "HEIC/HEIF/AVIF photos cannot be decoded here; "
                        "save or share the photo as JPEG")
    raise ReadError("not_an_image", "the data is not a JPEG, PNG, WebP, BMP or TIFF image")


def _header_size(data: bytes, kind: str) -> tuple[int, int] | None:
    """(width, height) from a JPEG or PNG header without decoding, else ``None``.

    Also rejects a JPEG whose image data was cut off: libjpeg would quietly pad it with grey,
    and a half-grey photo must not be read as a half-empty board.
    """
    if kind == "PNG":
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise ReadError("unreadable_image", "the PNG header is damaged")
        return struct.unpack(">II", data[16:24])
    if kind == "JPEG":
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int]:
    size = None
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            break
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2:i + 4])
        if marker in _SOF and i + 9 <= len(data):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            size = (w, h)
        if marker == 0xDA:  # start of scan: entropy-coded data follows up to the EOI marker
            if size is None or data.find(b"\xff\xd9", i + 2 + length) < 0:
                break
            return size
        i += 2 + length
    raise ReadError("unreadable_image", "the JPEG file is truncated or damaged")
